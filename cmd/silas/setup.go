package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"

	"github.com/rs/zerolog"

	"github.com/silas-ai/silas/config"
	"github.com/silas-ai/silas/persistence"
	"github.com/silas-ai/silas/runtime/keys"
)

// Keystore entries besides the owner key.
const (
	keySessionSecret = "session_secret"
	keyWebToken      = "web_token"
)

// installation is what init creates and serve uses.
type installation struct {
	keys          *keys.Manager
	keystore      *keys.FileKeystore
	ownerToken    string
	sessionSecret []byte
	db            *persistence.DB
	created       []string
}

// install runs every init step that is missing: it is what `silas init`
// does, and `silas serve` runs it too, so a first `make run` just works.
func install(ctx context.Context, cfg *config.Config, log zerolog.Logger) (*installation, error) {
	in := &installation{}
	// The gate scripts' directory is shown read-only to the script gates'
	// sandbox, whose unprivileged user must be able to enter it; inside the
	// private data dir, 0755 opens it to no other host user.
	dirs := []struct {
		path string
		mode os.FileMode
	}{{cfg.DataDir, 0o700}, {cfg.Sandbox.VerifyDir, 0o700}, {cfg.Sandbox.CustomerContextDir, 0o700}, {cfg.Gates.ScriptDir, 0o755}}
	for _, dir := range dirs {
		if _, err := os.Stat(dir.path); errors.Is(err, os.ErrNotExist) {
			in.created = append(in.created, "directory "+dir.path)
			if err := os.MkdirAll(dir.path, 0o700); err != nil {
				return nil, fmt.Errorf("create %s: %w (check that the parent directory is writable)", dir.path, err)
			}
			if err := os.Chmod(dir.path, dir.mode); err != nil {
				return nil, fmt.Errorf("create %s: %w", dir.path, err)
			}
		}
	}
	if err := checkPrivate(cfg.DataDir, "silas.data_dir"); err != nil {
		return nil, err
	}
	if err := checkWritable(cfg.DataDir, "silas.data_dir"); err != nil {
		return nil, err
	}
	ks, err := keys.NewFileKeystore(cfg.DataDir)
	if err != nil {
		return nil, fmt.Errorf("open keystore: %w", err)
	}
	in.keystore = ks
	if in.keys, err = keys.Open(ks); err != nil {
		return nil, fmt.Errorf("open keys: %w", err)
	}
	created, err := in.keys.EnsureOwnerKey()
	if err != nil {
		return nil, fmt.Errorf("create owner key: %w", err)
	}
	if created {
		in.created = append(in.created, "owner key "+in.keys.OwnerKeyID())
	}
	if in.sessionSecret, err = secret(ks, keySessionSecret, &in.created); err != nil {
		return nil, err
	}
	in.ownerToken = cfg.Channels.Web.AuthToken
	if in.ownerToken == "" {
		tok, err := secret(ks, keyWebToken, &in.created)
		if err != nil {
			return nil, err
		}
		in.ownerToken = base64.RawURLEncoding.EncodeToString(tok)
	}
	in.db, err = persistence.Open(ctx, persistence.Options{
		Dir: cfg.DataPath("db"), SyncWrites: cfg.Persistence.SyncWrites, Logger: &log,
		MinFreeBytes: cfg.Persistence.MinFreeBytes(),
	})
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	return in, nil
}

// checkPrivate refuses a directory that users other than its owner can
// list or enter: the data dir holds the owner key, the web token and every
// conversation, and a sandboxed process running as another uid must find
// nothing there.
func checkPrivate(dir, key string) error {
	info, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	if perm := info.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("%s: %w: %s has mode %04o, so other users can read it; run `chmod 700 %s` and start again",
			key, keys.ErrInsecurePermissions, dir, perm, dir)
	}
	return nil
}

// secret returns the keystore entry name, creating 32 random bytes the first
// time.
func secret(ks keys.Keystore, name string, created *[]string) ([]byte, error) {
	b, err := ks.Get(name)
	if err == nil {
		return b, nil
	}
	if !errors.Is(err, keys.ErrNotFound) {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	b = make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return nil, fmt.Errorf("generate %s: %w", name, err)
	}
	if err := ks.Put(name, b); err != nil {
		return nil, fmt.Errorf("store %s: %w", name, err)
	}
	*created = append(*created, name)
	return b, nil
}
