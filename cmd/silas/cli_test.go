package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dgraph-io/badger/v4"
)

func runCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), args, strings.NewReader(""), &out, &errb)
	return out.String() + errb.String(), err
}

func TestAuditVerify(t *testing.T) {
	mock := newMock(t)
	dir := t.TempDir()
	ov := overrides(t, mock, dir)
	cfgPath := writeConfig(t, ov)
	d := startTest(t, loadConfig(t, ov))
	c := owner(t, d.Addr())
	c.answer(c.say("something worth auditing"))
	d.stop()

	out, err := runCLI(t, "audit", "verify", "--config", cfgPath)
	if err != nil || !strings.Contains(out, "audit chain OK") {
		t.Fatalf("verify on an intact log: %v\n%s", err, out)
	}

	seq := flipAuditByte(t, filepath.Join(dir, "db"))
	out, err = runCLI(t, "audit", "verify", "--config", cfgPath)
	if err == nil || !strings.Contains(out, "BROKEN at entry "+seq) {
		t.Fatalf("verify after altering entry %s: %v\n%s", seq, err, out)
	}
}

// flipAuditByte changes one byte in the second audit entry's stored value
// and returns that entry's sequence number.
func flipAuditByte(t *testing.T, dbDir string) string {
	t.Helper()
	db, err := badger.Open(badger.DefaultOptions(dbDir).WithLogger(nil))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var seq string
	err = db.Update(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.DefaultIteratorOptions)
		defer it.Close()
		n := 0
		for it.Seek([]byte(auditPrefix)); it.ValidForPrefix([]byte(auditPrefix)); it.Next() {
			if n++; n < 2 {
				continue
			}
			key := it.Item().KeyCopy(nil)
			val, err := it.Item().ValueCopy(nil)
			if err != nil {
				return err
			}
			i := bytes.Index(val, []byte("stream_started"))
			if i < 0 {
				i = len(val) / 2
			}
			val[i] ^= 0x01
			seq = auditSeq(key)
			return txn.Set(key, val)
		}
		return nil
	})
	if err != nil || seq == "" {
		t.Fatalf("alter audit entry: %v (seq %q)", err, seq)
	}
	return seq
}

func TestConfigErrorsRefuseToStart(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want string
	}{
		{"public host without token", "silas:\n  channels:\n    web:\n      host: 0.0.0.0\n", "auth_token"},
		{"profile over 0.80", "silas:\n  context:\n    profiles:\n      coding: { chronicle_pct: 0.5, memory_pct: 0.2, workspace_pct: 0.2 }\n", "silas.context.profiles.coding"},
		{"unknown key", "silas:\n  channels:\n    web:\n      prot: 9000\n", "silas.channels.web.port"},
		{"docker backend", "silas:\n  sandbox:\n    backend: docker\n", "silas.sandbox.backend"},
		{"unknown backend", "silas:\n  sandbox:\n    backend: jail\n", "silas.sandbox.backend"},
		{"subprocess without opt-in", "silas:\n  sandbox:\n    backend: subprocess\n", "silas.sandbox.allow_unisolated"},
		{"docker image", "silas:\n  sandbox:\n    base_image: python:3.12-slim\n", "silas.sandbox.base_image"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "silas.yaml")
			yaml := tt.yaml + "  data_dir: " + filepath.Join(t.TempDir(), "data") + "\n"
			if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			out, err := runCLI(t, "serve", "--config", path)
			if err == nil {
				t.Fatal("serve started with an invalid config")
			}
			if !strings.Contains(err.Error()+out, tt.want) {
				t.Fatalf("error does not name %q:\n%v\n%s", tt.want, err, out)
			}
		})
	}
}

// TestReadableDataDirRefusesToStart: a data dir or keys dir that other users
// can read stops the daemon before it opens anything, naming the path and
// the chmod that fixes it.
func TestReadableDataDirRefusesToStart(t *testing.T) {
	tests := []struct {
		name  string
		chmod func(dataDir string) string // returns the path it opened up
	}{
		{"world-readable data dir", func(d string) string { return d }},
		{"world-readable keys dir", func(d string) string { return filepath.Join(d, "keys") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			if out, err := runCLI(t, "init", "--data-dir", dir); err != nil {
				t.Fatalf("init: %v\n%s", err, out)
			}
			opened := tt.chmod(dir)
			if err := os.Chmod(opened, 0o755); err != nil {
				t.Fatal(err)
			}
			out, err := runCLI(t, "serve", "--data-dir", dir, "--port", "0")
			if err == nil {
				t.Fatal("serve started with a readable " + opened)
			}
			for _, want := range []string{opened, "chmod 700"} {
				if !strings.Contains(err.Error()+out, want) {
					t.Fatalf("error does not name %q:\n%v\n%s", want, err, out)
				}
			}
		})
	}
}

func TestInitIsIdempotent(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	out, err := runCLI(t, "init", "--data-dir", dir)
	if err != nil || !strings.Contains(out, "owner key") {
		t.Fatalf("first init: %v\n%s", err, out)
	}
	out, err = runCLI(t, "init", "--data-dir", dir)
	if err != nil || !strings.Contains(out, "nothing to do") {
		t.Fatalf("second init: %v\n%s", err, out)
	}
	tok, err := runCLI(t, "token", "--data-dir", dir)
	if err != nil || len(strings.TrimSpace(tok)) < 20 {
		t.Fatalf("token: %v %q", err, tok)
	}
}

// auditPrefix is the audit log's key prefix (persistence/keys.go).
const auditPrefix = "a/"

func auditSeq(key []byte) string {
	return strconv.FormatUint(binary.BigEndian.Uint64(key[len(auditPrefix):]), 10)
}
