package script

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/silas-ai/silas/runtime/gates"
)

// resolveDir returns the script directory with its symlinks resolved; it
// must exist and be a directory.
func resolveDir(dir string) (string, error) {
	resolved, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", fmt.Errorf("%w: script directory: %w; create it and put the gate scripts there", gates.ErrBadConfig, err)
	}
	fi, err := os.Stat(resolved)
	if err != nil || !fi.IsDir() {
		return "", fmt.Errorf("%w: script directory %q is not a directory", gates.ErrBadConfig, dir)
	}
	return resolved, nil
}

// resolveProgram returns what argv[0] names, given the script directory as
// configured (dir) and resolved (realDir):
//
//   - a name without a slash is a program of the sandbox's PATH (system
//     directories only), returned as it is;
//   - a path with a slash is a script of the script directory: relative
//     paths resolve against it, absolute ones must lie in it; no ".."
//     component is accepted; every symlink is resolved and the result must
//     still lie in the directory and be a regular file. The resolved path
//     is returned, so what runs is what was checked.
func resolveProgram(dir, realDir, prog string) (string, error) {
	if prog == "" || strings.IndexByte(prog, 0) >= 0 {
		return "", fmt.Errorf("%w: the program name is empty or holds a NUL byte", gates.ErrBadConfig)
	}
	if !strings.Contains(prog, "/") {
		return prog, nil
	}
	for _, part := range strings.Split(prog, "/") {
		if part == ".." {
			return "", fmt.Errorf("%w: script %q: \"..\" is not allowed; name a script inside the script directory %s",
				gates.ErrBadConfig, prog, dir)
		}
	}
	p := prog
	if filepath.IsAbs(p) {
		p = filepath.Clean(p)
		if !within(dir, p) && !within(realDir, p) {
			return "", fmt.Errorf("%w: script %q lies outside the script directory %s; move it there", gates.ErrBadConfig, prog, dir)
		}
	} else {
		p = filepath.Join(realDir, p)
	}
	resolved, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", fmt.Errorf("%w: script %q: %w", gates.ErrBadConfig, prog, err)
	}
	if !within(realDir, resolved) {
		return "", fmt.Errorf("%w: script %q resolves to %s, outside the script directory %s", gates.ErrBadConfig, prog, resolved, dir)
	}
	fi, err := os.Stat(resolved)
	if err != nil || !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%w: script %q is not a regular file", gates.ErrBadConfig, prog)
	}
	return resolved, nil
}

// within reports whether the clean absolute path p is dir or lies below it.
func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
}
