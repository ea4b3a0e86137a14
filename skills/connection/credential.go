package connection

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// SecretsDirName is the directory of the work dir that holds the
// credential file (SILAS_SECRETS_DIR).
const SecretsDirName = ".silas-secrets"

// MaxCredentialBytes bounds a credential file read back from a run.
const MaxCredentialBytes = 64 << 10

// minSecretLen is the shortest value checked for in a script's output:
// shorter strings would match ordinary text.
const minSecretLen = 8

// stageCredential writes value as the credential file of ref in workDir,
// owned like the work dir (an isolating backend runs the script as the
// work dir's owner, which must read and replace the file) and readable by
// that owner only.
func stageCredential(workDir, ref string, value []byte) error {
	st, err := os.Stat(workDir)
	if err != nil {
		return fmt.Errorf("stat the work dir: %w", err)
	}
	dir := filepath.Join(workDir, SecretsDirName)
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("create %s: %w", SecretsDirName, err)
	}
	uid, gid := owner(st)
	if err := os.Lchown(dir, uid, gid); err != nil {
		return fmt.Errorf("own %s: %w", SecretsDirName, err)
	}
	if value == nil {
		return nil
	}
	p := filepath.Join(dir, ref)
	if err := os.WriteFile(p, value, 0o600); err != nil {
		return fmt.Errorf("write the credential file: %w", err)
	}
	if err := os.Lchown(p, uid, gid); err != nil {
		return fmt.Errorf("own the credential file: %w", err)
	}
	return nil
}

func owner(st os.FileInfo) (int, int) {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return int(s.Uid), int(s.Gid)
	}
	return os.Getuid(), os.Getgid()
}

// readCredential returns the credential file of ref in workDir, or nil
// when there is none. The work dir is opened as an os.Root, so a symlink
// the script left cannot make the daemon read outside it.
func readCredential(workDir, ref string) ([]byte, error) {
	root, err := os.OpenRoot(workDir)
	if err != nil {
		return nil, fmt.Errorf("open the work dir: %w", err)
	}
	defer root.Close()
	f, err := root.Open(filepath.Join(SecretsDirName, ref))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open the credential file: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("the credential file is not a regular file")
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxCredentialBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read the credential file: %w", err)
	}
	if len(b) > MaxCredentialBytes {
		return nil, fmt.Errorf("the credential file is larger than %d bytes", MaxCredentialBytes)
	}
	return b, nil
}

// Fragments returns the parts of a credential that must never appear in
// output: the whole value, and when it is a JSON object (the bundled OAuth
// skills store tokens so) every string under a key that names a secret
// (access_token, refresh_token, api_key, client_secret, password, ...).
// Other fields, such as the account name or the expiry, are printed on
// purpose and are not secret.
func Fragments(value []byte) [][]byte {
	v := bytes.TrimSpace(value)
	if len(v) < minSecretLen {
		return nil
	}
	out := [][]byte{v}
	var doc any
	if json.Unmarshal(v, &doc) == nil {
		collectSecrets(doc, false, &out)
	}
	return out
}

func collectSecrets(v any, secret bool, out *[][]byte) {
	switch x := v.(type) {
	case string:
		if secret && len(x) >= minSecretLen {
			*out = append(*out, []byte(x))
		}
	case map[string]any:
		for k, e := range x {
			collectSecrets(e, secret || SecretKey(k), out)
		}
	case []any:
		for _, e := range x {
			collectSecrets(e, secret, out)
		}
	}
}

// SecretKey reports whether a JSON key names a secret value.
func SecretKey(k string) bool {
	k = strings.ToLower(k)
	for _, not := range []string{"type", "expire", "scope", "url", "uri", "hint"} {
		if strings.Contains(k, not) {
			return false
		}
	}
	for _, is := range []string{"token", "secret", "password", "passwd", "key", "credential", "cookie", "session", "code_verifier", "assertion"} {
		if strings.Contains(k, is) {
			return true
		}
	}
	return false
}
