package verify_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/verify"
)

// Checks that fail on dishonest work whatever the agent plants next to its
// artifacts. Each passes on honest artifacts and would pass on the dishonest
// ones only if a planted file took part.
const (
	// pythonCheck reads result.json with the standard library's json.
	pythonCheck = `python3 -c 'import json, sys; sys.exit(0 if json.load(open("result.json"))["ok"] is True else 1)'`
	// gitCleanCheck asserts a clean work tree: no change, nothing untracked.
	gitCleanCheck = `git status --porcelain | wc -l`
	// nodeCheck installs its own helper module under HOME (a global
	// require() folder) and requires it by its bare name.
	nodeCheck = `mkdir -p "$HOME/.node_modules/verifier" &&
echo 'module.exports = f => JSON.parse(require("fs").readFileSync(f, "utf8")).ok === true' > "$HOME/.node_modules/verifier/index.js" &&
node -e 'process.exit(require("verifier")("result.json") ? 0 : 1)'`
)

// Agent scripts (run in the agent's sandbox by agentDir).
const (
	honestResult    = `printf '{"ok": true}\n' > result.json`
	dishonestResult = `printf '{"ok": false}\n' > result.json`
	// patchJSON makes json.load answer {"ok": true}, whatever it reads.
	patchJSON = `import json
json.load = lambda f: {"ok": True}
`
	gitRepo = `git init -q . && printf 'v1\n' > tracked.txt && git add -A &&
git -c user.name=agent -c user.email=agent@example.invalid commit -q -m work`
)

// inUserSites writes a module of the given name with body into
// ~/.local/lib/python3.X/site-packages for every Python 3 a host may have,
// where HOME is the artifacts dir.
func inUserSites(name, body string) string {
	var b strings.Builder
	for minor := 8; minor <= 16; minor++ {
		d := ".local/lib/python3." + strconv.Itoa(minor) + "/site-packages"
		b.WriteString("mkdir -p " + d + " && cat > " + d + "/" + name + " <<'EOF'\n" + body + "EOF\n")
	}
	return b.String()
}

// TestPlantedFilesCannotPassAFailingCheck plays an agent that left failing
// work and planted a file that makes the check pass when a tool picks it up
// by itself: from the working directory, HOME or a repository's config.
// Under every backend the check must fail on that work, and pass on honest
// work (the control). naive shows that the planted file does fool a runner
// that runs checks in a plain copy used as working directory and HOME, so
// the test would catch the defence going away.
func TestPlantedFilesCannotPassAFailingCheck(t *testing.T) {
	cases := []struct {
		name    string
		tool    string
		check   messages.VerificationCheck
		honest  string
		planted string
		naive   bool
	}{
		{
			name: "json.py shadows the standard library", tool: "python3",
			check:  check("json", pythonCheck, exitCode(0)),
			honest: honestResult,
			planted: dishonestResult + "\ncat > json.py <<'EOF'\ndef load(f): return {\"ok\": True}\n" +
				"def loads(s, **kw): return {\"ok\": True}\nEOF\n",
			naive: true,
		},
		{
			name: "usercustomize.py in HOME's user site", tool: "python3",
			check:   check("json", pythonCheck, exitCode(0)),
			honest:  honestResult,
			planted: dishonestResult + "\n" + inUserSites("usercustomize.py", patchJSON),
			naive:   true,
		},
		{
			// Debian's Python ships a sitecustomize of its own that comes
			// first on sys.path, so a naive runner is not fooled on every
			// host: naive is not asserted.
			name: "sitecustomize.py next to the artifacts and in the user site", tool: "python3",
			check:   check("json", pythonCheck, exitCode(0)),
			honest:  honestResult,
			planted: dishonestResult + "\ncat > sitecustomize.py <<'EOF'\n" + patchJSON + "EOF\n" + inUserSites("sitecustomize.py", patchJSON),
		},
		{
			name: "a .pth file in HOME's user site", tool: "python3",
			check:  check("json", pythonCheck, exitCode(0)),
			honest: honestResult,
			planted: dishonestResult + "\n" + inUserSites("zz.pth",
				"import json; json.load = lambda f: {\"ok\": True}\n"),
			naive: true,
		},
		{
			name: ".gitconfig in HOME includes a file hiding untracked files", tool: "git",
			check:  check("clean", gitCleanCheck, equals("0")),
			honest: gitRepo,
			planted: `printf '[include]\n\tpath = hide.inc\n' > .gitconfig
printf '[status]\n\tshowUntrackedFiles = no\n' > hide.inc
` + gitRepo + `
printf 'left over\n' > junk.txt`,
			naive: true,
		},
		{
			name: ".git/config core.fsmonitor kills git before it reports", tool: "git",
			check:  check("clean", gitCleanCheck, equals("0")),
			honest: gitRepo,
			planted: gitRepo + `
git config core.fsmonitor 'kill -9 $PPID; :'
printf 'v2\n' > tracked.txt`,
			naive: true,
		},
		{
			name: "node_modules shadows the check's module", tool: "node",
			check:   check("node", nodeCheck, exitCode(0)),
			honest:  honestResult,
			planted: dishonestResult + "\nmkdir -p node_modules/verifier && echo 'module.exports = () => true' > node_modules/verifier/index.js",
			naive:   true,
		},
	}
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			// Node's V8 reserves more address space than the default 512 MB
			// RLIMIT_AS allows and dies with SIGTRAP under it.
			r := newRunner(t, b.new(t), verify.Options{MaxMemoryMB: 2048})
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					needTool(t, tc.tool)
					honest := agentDir(t, tc.honest)
					if got := runOne(t, r, tc.check, honest); !got.Passed {
						t.Fatalf("control: the check fails on honest work: %+v", got)
					}
					planted := agentDir(t, tc.planted)
					if got := runOne(t, r, tc.check, planted); got.Passed {
						t.Fatalf("the planted file made a failing check pass: %+v", got)
					}
					if tc.naive && b.name == "subprocess" && !naiveRun(t, planted, tc.check.Run) {
						t.Fatal("the planted file does not fool a naive runner either: the case tests nothing")
					}
				})
			}
		})
	}
}

// TestChecksCannotWriteArtifacts: a check's writes into the artifacts fail
// where the backend enforces read-only paths, and under every backend they
// reach neither the agent's work dir nor what the next check sees.
func TestChecksCannotWriteArtifacts(t *testing.T) {
	// No chmod among them: under the subprocess backend the check owns its
	// copy and may give itself the permissions back.
	const write = `for op in 'echo changed > result.txt' 'echo changed > sub/data.txt' 'rm -f result.txt' 'touch new.txt' 'mkdir new'; do
  if (eval "$op") 2>/dev/null; then echo "wrote: $op"; fi
done
echo done`
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			r := newRunner(t, b.new(t), verify.Options{})
			exec := writeTree(t, map[string]string{"result.txt": "42\n", "sub/data.txt": "nested\n"})
			writeCheck := check("write", write, equals("done"))
			after := check("after", "cat result.txt sub/data.txt; ls | paste -sd, -", equals("42\nnested\nresult.txt,sub"))
			rep, err := r.Run(t.Context(), []messages.VerificationCheck{writeCheck, after}, exec)
			if err != nil {
				t.Fatal(err)
			}
			if got := rep.Results[0]; b.enforcing && !got.Passed {
				t.Errorf("a write into the read-only artifacts succeeded: %+v", got)
			} else if !got.Passed {
				t.Logf("the subprocess backend runs checks with the server's uid (root here), so its writes reach its own throwaway copy: %q", got.Output)
			}
			if got := rep.Results[1]; !got.Passed {
				t.Errorf("the next check saw the first one's writes: %+v", got)
			}
			entries, err := os.ReadDir(exec)
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(filepath.Join(exec, "result.txt"))
			if err != nil || string(b) != "42\n" || len(entries) != 2 {
				t.Fatalf("the agent's work dir changed: %q, %v, %d entries", b, err, len(entries))
			}
		})
	}
}
