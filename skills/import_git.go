package skills

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

var commitRE = regexp.MustCompile(`^[0-9a-f]{40}([0-9a-f]{24})?$`)

// gitCommit returns the commit checked out in the git working tree holding
// dir (dir itself or up to maxGitDepth parents), by reading .git/HEAD and
// the refs; it runs no program. "" when there is none or it cannot be read
// (a .git file of a worktree is not followed).
func gitCommit(dir string) (commit string, worktree bool) {
	const maxGitDepth = 16
	for i := 0; i < maxGitDepth; i++ {
		g := filepath.Join(dir, ".git")
		st, err := os.Lstat(g)
		if err == nil {
			if !st.IsDir() {
				return "", true
			}
			return readHead(g), false
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return "", false
}

func readHead(gitDir string) string {
	b, err := os.ReadFile(filepath.Join(gitDir, "HEAD"))
	if err != nil {
		return ""
	}
	head := strings.TrimSpace(string(b))
	if commitRE.MatchString(head) {
		return head
	}
	ref, ok := strings.CutPrefix(head, "ref: ")
	if !ok || !strings.HasPrefix(ref, "refs/") || strings.Contains(ref, "..") {
		return ""
	}
	if b, err := os.ReadFile(filepath.Join(gitDir, filepath.FromSlash(ref))); err == nil {
		if c := strings.TrimSpace(string(b)); commitRE.MatchString(c) {
			return c
		}
	}
	f, err := os.Open(filepath.Join(gitDir, "packed-refs"))
	if err != nil {
		return ""
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		c, name, found := strings.Cut(sc.Text(), " ")
		if found && name == ref && commitRE.MatchString(c) {
			return c
		}
	}
	return ""
}
