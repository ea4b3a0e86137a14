package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/silas-ai/silas/persistence"
)

const backupUsage = `Usage:
  silas backup <file> [--url URL] [--config FILE] [--data-dir DIR]
  silas restore <file> --data-dir DIR [--config FILE]

backup asks the running daemon for a consistent copy of its database
(history, memory, audit chain, work items, skills state) and writes it to
<file>, a new file, while the daemon keeps serving; the file is kept only
once its checksum matches. restore creates a data dir from such a file; the
directory must be new or empty, and the daemon must not be using it.

Neither copies <data_dir>/keys (the owner key, the web token, secret
values): keep a copy of that directory, with its 0600 modes, next to your
backups, and put it into the restored data dir before you start it.
`

// backupHeaderLimit bounds the wait for the daemon to start answering; the
// body itself may take as long as the database takes to stream.
const backupHeaderLimit = 30 * time.Second

func runBackup(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("backup", "Back up the running daemon's database to a new file.", stderr)
	fs.Usage = func() { fmt.Fprint(stderr, backupUsage) }
	var c common
	c.register(fs)
	daemonURL := fs.String("url", "", "daemon URL (default http://<silas.channels.web.host>:<port>)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		fmt.Fprint(stderr, backupUsage)
		return &exitError{code: 2, err: errors.New("usage: silas backup <file>")}
	}
	file := pos[0]
	if _, err := os.Lstat(file); err == nil {
		return fmt.Errorf("%s exists; name a new file (a backup never overwrites one)", file)
	}
	cfg, tok, base, err := daemonAddress(&c, *daemonURL)
	if err != nil {
		return err
	}
	info, err := fetchBackup(ctx, base, tok, file)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "backup written to %s: %d bytes of database, sha256 %s\n", file, info.Bytes, info.SHA256)
	fmt.Fprintf(stdout, "it does not hold %s: keep a copy of that directory too (silas restore explains)\n", filepath.Join(cfg.DataDir, "keys"))
	return nil
}

// fetchBackup streams GET /backup into a temporary file beside file,
// checks it and links it into place, so that file only ever exists whole.
func fetchBackup(ctx context.Context, base, token, file string) (persistence.BackupInfo, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/backup", nil)
	if err != nil {
		return persistence.BackupInfo{}, fmt.Errorf("daemon URL %q: %w", base, err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	client := &http.Client{Transport: &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
		ResponseHeaderTimeout: backupHeaderLimit,
	}}
	resp, err := client.Do(req)
	if errors.Is(err, syscall.ECONNREFUSED) {
		return persistence.BackupInfo{}, fmt.Errorf("silas is not running at %s: a backup is taken by the running daemon; start it with `silas serve` (or pass --url)", base)
	}
	if err != nil {
		return persistence.BackupInfo{}, fmt.Errorf("call silas at %s: %w", base, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		var e struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(b, &e) == nil && e.Message != "" {
			return persistence.BackupInfo{}, fmt.Errorf("silas refused the backup (HTTP %d): %s", resp.StatusCode, e.Message)
		}
		return persistence.BackupInfo{}, fmt.Errorf("silas refused the backup: HTTP %d", resp.StatusCode)
	}

	tmp, err := os.CreateTemp(filepath.Dir(file), "."+filepath.Base(file)+".partial-*")
	if err != nil {
		return persistence.BackupInfo{}, fmt.Errorf("create %s: %w", file, err)
	}
	defer os.Remove(tmp.Name()) // after the link below, only the temporary name goes
	_, err = io.Copy(tmp, resp.Body)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return persistence.BackupInfo{}, fmt.Errorf("write %s: %w (nothing was kept)", file, err)
	}
	f, err := os.Open(tmp.Name())
	if err != nil {
		return persistence.BackupInfo{}, err
	}
	info, err := persistence.VerifyBackup(f)
	f.Close()
	if err != nil {
		return persistence.BackupInfo{}, fmt.Errorf("the backup silas sent is not complete, so nothing was kept (see the daemon's log and audit for backup_failed): %w", err)
	}
	if err := os.Link(tmp.Name(), file); err != nil {
		return persistence.BackupInfo{}, fmt.Errorf("keep the backup as %s: %w", file, err)
	}
	return info, nil
}

func runRestore(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("restore", "Create a data dir from a backup file.", stderr)
	fs.Usage = func() { fmt.Fprint(stderr, backupUsage) }
	var c common
	c.register(fs)
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		fmt.Fprint(stderr, backupUsage)
		return &exitError{code: 2, err: errors.New("usage: silas restore <file> --data-dir DIR")}
	}
	cfg, err := c.load(nil)
	if err != nil {
		return err
	}
	dir := cfg.DataDir
	created, err := freshDataDir(dir)
	if err != nil {
		return err
	}
	f, err := os.Open(pos[0])
	if err != nil {
		return fmt.Errorf("open the backup: %w", err)
	}
	defer f.Close()
	info, err := persistence.Restore(ctx, f, persistence.Options{Dir: cfg.DataPath("db"), SyncWrites: true})
	if err != nil {
		if created {
			_ = os.Remove(dir) // Restore removed what it wrote
		}
		return fmt.Errorf("restore into %s: %w", dir, err)
	}
	fmt.Fprintf(stdout, "restored %d bytes of database (sha256 %s) into %s\n", info.Bytes, info.SHA256, cfg.DataPath("db"))
	fmt.Fprintf(stdout, "next: copy the keys directory of the old data dir to %s (keeping its 0600 modes), then run `silas serve --data-dir %s`;\n"+
		"without it silas makes a new owner key and web token, and stored secret values are gone\n", filepath.Join(dir, "keys"), dir)
	return nil
}

// freshDataDir accepts a data dir that does not exist (it is created,
// 0700) or is empty, and refuses any other with its path: a restore never
// merges into or replaces a data dir.
func freshDataDir(dir string) (created bool, err error) {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return false, fmt.Errorf("create the data dir %s: %w", dir, err)
		}
		return true, nil
	case err != nil:
		return false, fmt.Errorf("data dir %s: %w", dir, err)
	case len(entries) > 0:
		return false, fmt.Errorf("data dir %s is not empty (%d entries): restore only into a new or empty directory, "+
			"and never into the data dir of a running daemon; pass --data-dir with a new path", dir, len(entries))
	}
	if err := checkPrivate(dir, "--data-dir"); err != nil {
		return false, err
	}
	return false, nil
}
