package verify

import (
	"io/fs"
	"path/filepath"
	"strings"
)

// gitDirSkipped are the entries of a .git directory (or of a repository
// nested in it: .git/modules/<name>, .git/worktrees/<name>) that the copy
// leaves out. Each one makes git run or read something the agent chose:
// config (core.fsmonitor, core.pager, diff.external, filter drivers,
// include.path, alias), config.worktree (the same, per worktree), hooks/
// (scripts run by git commands) and commondir (points the repository at
// another directory, with its own config and hooks).
var gitDirSkipped = map[string]bool{"config": true, "config.worktree": true, "hooks": true, "commondir": true}

// gitDataDirs are the directories of a .git directory that hold only data
// (objects, refs, reflogs): a branch or a reflog named "config" is kept.
var gitDataDirs = map[string]bool{"objects": true, "refs": true, "logs": true}

// skipArtifact reports whether the copy of the agent's tree leaves out the
// entry at rel (relative to the copied root), because a check would pick it
// up without naming it:
//
//   - any entry named node_modules: require() resolves bare module names
//     through the node_modules directories of the working directory and its
//     ancestors, so a package left there would replace what a check
//     requires;
//   - a .git that is not a real directory: a .git file ("gitdir: <path>")
//     or symlink points git at a repository outside the copy, with its own
//     config and hooks;
//   - below a .git directory, at any depth (submodules under .git/modules,
//     worktrees under .git/worktrees), the entries named in gitDirSkipped,
//     except under the top .git directory's objects/, refs/ and logs/. git
//     still reads the repository without them (HEAD, objects, refs and the
//     index are kept), with git's defaults and the overrides of checkEnv.
func skipArtifact(rel string, d fs.DirEntry) bool {
	base := filepath.Base(rel)
	if base == "node_modules" {
		return true
	}
	if base == ".git" && !d.IsDir() {
		return true
	}
	if !gitDirSkipped[base] {
		return false
	}
	parts := strings.Split(filepath.ToSlash(filepath.Dir(rel)), "/")
	for i, p := range parts {
		if p == ".git" {
			return i+1 >= len(parts) || !gitDataDirs[parts[i+1]]
		}
	}
	return false
}
