package verify

import (
	"path/filepath"
	"strconv"
)

// gitOverrides are git settings given at the command-line level (through
// GIT_CONFIG_COUNT), which outranks every configuration file: they hold
// even if a repository's config reaches the check despite the copy leaving
// it out (a repository outside the copy, a bare repository among the
// artifacts).
var gitOverrides = [][2]string{
	// No file system monitor: core.fsmonitor names a command to run.
	{"core.fsmonitor", "false"},
	// No hooks: /dev/null is not a directory, so no hook is found.
	{"core.hooksPath", "/dev/null"},
	// A bare repository is used only when named by --git-dir or GIT_DIR,
	// never found by walking up from the working directory.
	{"safe.bareRepository", "explicit"},
}

// checkEnv is the environment a check gets on top of the backend's PATH and
// HOME (an empty directory that is not the artifacts). Each variable keeps
// a tool from loading code or configuration from the artifacts or HOME
// without the check naming it; none carries a value of the agent or the
// server:
//
//   - Python: PYTHONSAFEPATH keeps the working directory (and a script's
//     directory) off sys.path, so a json.py, sitecustomize.py or
//     usercustomize.py among the artifacts is not imported (Python 3.11 or
//     later; older versions ignore it); PYTHONNOUSERSITE keeps
//     ~/.local/lib/python3.X/site-packages off sys.path;
//     PYTHONDONTWRITEBYTECODE keeps __pycache__ from being written.
//   - git: no system or global configuration file (GIT_CONFIG_NOSYSTEM,
//     GIT_CONFIG_GLOBAL=/dev/null), the gitOverrides, safe.directory for
//     the artifacts directory alone, and
//     GIT_CEILING_DIRECTORIES at the artifacts' parent, so git never finds
//     a repository above the artifacts.
//
// Node needs no variable: NODE_PATH and NODE_OPTIONS are not set, HOME's
// ~/.node_modules is empty, and the copy leaves out node_modules.
func checkEnv(artifacts string) map[string]string {
	overrides := append(gitOverrides[:len(gitOverrides):len(gitOverrides)],
		// The copy is owned by the server's uid; a backend that runs the
		// check as another uid would make git refuse it as "dubious
		// ownership". Only the artifacts directory itself is trusted, a
		// repository nested in it is still refused there.
		[2]string{"safe.directory", artifacts})
	env := map[string]string{
		"PYTHONSAFEPATH":          "1",
		"PYTHONNOUSERSITE":        "1",
		"PYTHONDONTWRITEBYTECODE": "1",
		"GIT_CONFIG_NOSYSTEM":     "1",
		"GIT_CONFIG_GLOBAL":       "/dev/null",
		"GIT_CEILING_DIRECTORIES": filepath.Dir(artifacts),
		"GIT_CONFIG_COUNT":        strconv.Itoa(len(overrides)),
	}
	for i, kv := range overrides {
		env["GIT_CONFIG_KEY_"+strconv.Itoa(i)] = kv[0]
		env["GIT_CONFIG_VALUE_"+strconv.Itoa(i)] = kv[1]
	}
	return env
}
