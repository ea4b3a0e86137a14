package actors

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"syscall"
)

// keepArtifacts copies the artifacts (paths relative to workDir) into
// keep, at the same relative paths, before the attempt's sandbox is
// destroyed. Both sides are opened as os.Root, so a symbolic link the
// sandboxed code left behind cannot make the copy read or write outside
// them; only regular files are copied.
func keepArtifacts(workDir, keep string, artifacts map[string]string) error {
	if len(artifacts) == 0 {
		return nil
	}
	if err := os.MkdirAll(keep, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", keep, err)
	}
	src, err := os.OpenRoot(workDir)
	if err != nil {
		return fmt.Errorf("open the work dir: %w", err)
	}
	defer src.Close()
	dst, err := os.OpenRoot(keep)
	if err != nil {
		return fmt.Errorf("open %s: %w", keep, err)
	}
	defer dst.Close()
	rels := make([]string, 0, len(artifacts))
	for rel := range artifacts {
		rels = append(rels, rel)
	}
	sort.Strings(rels)
	for _, rel := range rels {
		if err := copyIn(src, dst, rel); err != nil {
			return fmt.Errorf("copy %s: %w", rel, err)
		}
	}
	return nil
}

func copyIn(src, dst *os.Root, rel string) error {
	info, err := src.Lstat(rel)
	if os.IsNotExist(err) {
		return nil // written, then removed by a later call: nothing to keep
	}
	if err != nil {
		return err
	}
	if !info.Mode().IsRegular() {
		return nil
	}
	in, err := src.Open(rel)
	if err != nil {
		return err
	}
	defer in.Close()
	if dir := filepath.Dir(rel); dir != "." {
		if err := dst.MkdirAll(dir, 0o700); err != nil {
			return err
		}
	}
	out, err := dst.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// placeInputs copies the input artifacts (paths relative to srcDir) into
// a fresh attempt's work dir (spec 5.2.1 step 0.5), both opened as
// os.Root so that no path or link reaches outside them. Unlike the
// artifacts kept for a project, an input that is missing is an error.
func placeInputs(srcDir, workDir string, inputs []string) error {
	src, err := os.OpenRoot(srcDir)
	if err != nil {
		return fmt.Errorf("open the kept artifacts: %w", err)
	}
	defer src.Close()
	dst, err := os.OpenRoot(workDir)
	if err != nil {
		return fmt.Errorf("open the work dir: %w", err)
	}
	defer dst.Close()
	for _, rel := range inputs {
		info, err := src.Lstat(rel)
		if err != nil {
			return fmt.Errorf("input %s: %w", rel, err)
		}
		if !info.Mode().IsRegular() {
			return fmt.Errorf("input %s is not a regular file", rel)
		}
		if err := copyIn(src, dst, rel); err != nil {
			return fmt.Errorf("copy input %s: %w", rel, err)
		}
		if err := ownLikeWorkDir(dst, rel); err != nil {
			return fmt.Errorf("input %s: %w", rel, err)
		}
	}
	return nil
}

// ownLikeWorkDir gives rel, and the directories copyIn made for it, the
// owner of the work dir. An isolating sandbox started by a root daemon runs
// as an unprivileged uid that owns its work dir; a file the daemon placed
// there as root would be unreadable to it.
func ownLikeWorkDir(dst *os.Root, rel string) error {
	info, err := dst.Stat(".")
	if err != nil {
		return err
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok || int(st.Uid) == os.Geteuid() {
		return nil
	}
	for p := rel; p != "." && p != string(filepath.Separator); p = filepath.Dir(p) {
		if err := dst.Lchown(p, int(st.Uid), int(st.Gid)); err != nil {
			return fmt.Errorf("give it the work dir's owner: %w", err)
		}
	}
	return nil
}
