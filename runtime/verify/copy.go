package verify

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// copyLimits bound what copyTree copies.
type copyLimits struct {
	maxBytes   int64
	maxEntries int
}

// copyMode says how copyTree leaves the copy.
type copyMode int

const (
	// writable leaves the copy as copied (the snapshot).
	writable copyMode = iota
	// readOnly leaves the copy readable and searchable by every uid and
	// writable by none, the root included (a check's view of the
	// artifacts): backends may run the check as a uid other than the
	// server's (the namespaces backend does, under a root server). The
	// caller keeps it inside a directory only the server's uid can enter.
	readOnly
)

// copyTree copies the content of the directory src into the existing
// directory dst, without ever following a symlink in src:
//
//   - entries that skipArtifact names are left out;
//   - directories are created 0700, regular files keep their owner
//     permission bits (so scripts stay executable) and are at least 0600;
//     with mode readOnly, files are 0444 (0555 when the owner could
//     execute them) and directories, dst included, become 0555 once the
//     copy is complete (which binds a process of another uid only: see
//     the package doc);
//   - a symlink is recreated as a symlink; an absolute target inside src (or
//     inside alias, the path src was named by before its own symlinks were
//     resolved) is rewritten to the relative path of the same entry, so a
//     link never points back into the agent's work dir; other targets are
//     kept as they are (file_exists resolves and re-checks them);
//   - FIFOs, sockets and devices are skipped, and so is a source entry that
//     cannot be read (the agent may have removed its own permissions);
//   - more than lim.maxEntries entries or lim.maxBytes file bytes fail with
//     errArtifactLimit.
//
// Errors writing dst wrap ErrUnavailable.
func copyTree(ctx context.Context, src, alias, dst string, lim copyLimits, mode copyMode) error {
	bytesLeft := lim.maxBytes
	entries := 0
	dirs := []string{dst}
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, walkErr error) error {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("copy artifacts: %w", err)
		}
		if p == src {
			if walkErr != nil {
				return fmt.Errorf("%w: %w", ErrExecDir, walkErr)
			}
			return nil
		}
		if walkErr != nil {
			// An unreadable entry of the agent's tree: leave it out.
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		entries++
		if entries > lim.maxEntries {
			return fmt.Errorf("%w: more than %d files and directories", errArtifactLimit, lim.maxEntries)
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return fmt.Errorf("%w: copy artifacts: %w", ErrUnavailable, err)
		}
		if skipArtifact(rel, d) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		target := filepath.Join(dst, rel)
		switch t := d.Type(); {
		case t.IsDir():
			if err := os.Mkdir(target, 0o700); err != nil {
				return fmt.Errorf("%w: copy artifacts: %w", ErrUnavailable, err)
			}
			dirs = append(dirs, target)
		case t&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return nil
			}
			if err := os.Symlink(rewriteLink(link, rel, src, alias), target); err != nil {
				return fmt.Errorf("%w: copy artifacts: %w", ErrUnavailable, err)
			}
		case t.IsRegular():
			n, err := copyFile(p, target, bytesLeft, mode)
			if errors.Is(err, errArtifactLimit) {
				return fmt.Errorf("%w: more than %d bytes of files", errArtifactLimit, lim.maxBytes)
			}
			if err != nil {
				return err
			}
			bytesLeft -= n
		}
		return nil
	})
	if err != nil || mode != readOnly {
		return err
	}
	// Children first, so that each directory is still writable while its
	// entries are changed.
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := os.Chmod(dirs[i], 0o555); err != nil {
			return fmt.Errorf("%w: make the artifacts read-only: %w", ErrUnavailable, err)
		}
	}
	return nil
}

// rewriteLink returns the target for the copy of a symlink at rel (relative
// to the copied root) whose original target is link: an absolute link into
// one of roots becomes the relative path to the same entry of the copy.
func rewriteLink(link, rel string, roots ...string) string {
	if !filepath.IsAbs(link) {
		return link
	}
	clean := filepath.Clean(link)
	for _, root := range roots {
		if root == "" {
			continue
		}
		inner, err := filepath.Rel(root, clean)
		if err != nil || inner == ".." || strings.HasPrefix(inner, "../") {
			continue
		}
		if out, err := filepath.Rel(filepath.Dir(rel), inner); err == nil {
			return out
		}
	}
	return link
}

// copyFile copies the regular file src to the new file dst and returns the
// bytes copied; more than left bytes fail with errArtifactLimit. src is
// opened without following a symlink and without blocking on a FIFO, and
// must still be a regular file once open; if it is not, or cannot be
// opened, it is skipped. With mode readOnly dst is created readable by all
// and writable by none.
func copyFile(src, dst string, left int64, mode copyMode) (int64, error) {
	in, err := os.OpenFile(src, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return 0, nil
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return 0, nil
	}
	perm := fi.Mode().Perm()&0o700 | 0o600
	if mode == readOnly {
		perm = 0o444
		if fi.Mode().Perm()&0o100 != 0 {
			perm = 0o555
		}
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return 0, fmt.Errorf("%w: copy artifacts: %w", ErrUnavailable, err)
	}
	n, err := io.Copy(out, io.LimitReader(in, left+1))
	if cerr := out.Close(); err == nil && cerr != nil {
		return n, fmt.Errorf("%w: copy artifacts: %w", ErrUnavailable, cerr)
	}
	if err != nil {
		return n, fmt.Errorf("%w: copy artifacts: %w", ErrUnavailable, err)
	}
	if n > left {
		return n, errArtifactLimit
	}
	return n, nil
}
