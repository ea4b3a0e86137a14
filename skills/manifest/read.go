package manifest

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"unicode/utf8"
)

// Limits of a skill directory. They keep a skill reviewable on one card, its
// install record well below persistence.MaxValueBytes, and reading it cheap
// enough to repeat before every script run.
const (
	MaxFiles      = 512
	MaxFileBytes  = 4 << 20
	MaxTotalBytes = 16 << 20
	MaxPathLen    = 255
	MaxDepth      = 8
)

// Read returns every regular file under the root of fsys, in path order,
// with its bytes and hash. A symlink or special file anywhere, a path that
// is not clean UTF-8 without control characters or backslashes, and a tree
// past the limits are errors wrapping ErrUnreadable.
func Read(fsys fs.FS) ([]Entry, error) {
	var (
		out   []Entry
		total int64
	)
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		if p == "." {
			if !d.IsDir() {
				return fmt.Errorf("the skill root is not a directory")
			}
			return nil
		}
		if err := checkPath(p); err != nil {
			return err
		}
		t := d.Type()
		switch {
		case t&fs.ModeSymlink != 0:
			return fmt.Errorf("%s is a symlink; skills may hold only regular files and directories, copy the target in instead", p)
		case d.IsDir():
			if strings.Count(p, "/")+1 > MaxDepth {
				return fmt.Errorf("%s is nested deeper than %d directories", p, MaxDepth)
			}
			return nil
		case !t.IsRegular():
			return fmt.Errorf("%s is not a regular file (%s)", p, t)
		}
		if len(out) == MaxFiles {
			return fmt.Errorf("more than %d files", MaxFiles)
		}
		data, err := readBounded(fsys, p)
		if err != nil {
			return err
		}
		total += int64(len(data))
		if total > MaxTotalBytes {
			return fmt.Errorf("files total more than %d bytes", MaxTotalBytes)
		}
		out = append(out, Entry{File: File{Path: p, SHA256: HashBytes(data), Size: int64(len(data))}, Data: data})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnreadable, err)
	}
	// WalkDir visits "a/b" before "a.txt"; callers want byte order.
	slices.SortFunc(out, func(a, b Entry) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}

// ReadDir reads the skill directory at path through an os.Root, so that no
// path inside it can resolve outside it even if the tree changes while it
// is read.
func ReadDir(path string) ([]Entry, error) {
	root, err := os.OpenRoot(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnreadable, err)
	}
	defer func() { _ = root.Close() }()
	return Read(root.FS())
}

// Build reads fsys and returns its manifest for name and version.
func Build(fsys fs.FS, name, version string) (Manifest, error) {
	es, err := Read(fsys)
	if err != nil {
		return Manifest{}, err
	}
	return New(name, version, es)
}

// readBounded reads the regular file p, refusing more than MaxFileBytes.
func readBounded(fsys fs.FS, p string) ([]byte, error) {
	f, err := fsys.Open(p)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	defer func() { _ = f.Close() }()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%s)", p, st.Mode().Type())
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("%s is larger than %d bytes", p, MaxFileBytes)
	}
	return data, nil
}

// checkPath accepts the slash paths that can name a skill file everywhere
// (JSON, Badger keys, every filesystem Silas runs on).
func checkPath(p string) error {
	switch {
	case !fs.ValidPath(p) || p == ".":
		return errors.New("invalid path " + strconvQuote(p))
	case len(p) > MaxPathLen:
		return fmt.Errorf("path %s is longer than %d bytes", strconvQuote(p), MaxPathLen)
	case !utf8.ValidString(p):
		return fmt.Errorf("path %s is not valid UTF-8", strconvQuote(p))
	case strings.ContainsRune(p, '\\'):
		return fmt.Errorf("path %s holds a backslash", strconvQuote(p))
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("path %s holds a control character", strconvQuote(p))
		}
	}
	return nil
}

func strconvQuote(s string) string { return fmt.Sprintf("%q", s) }
