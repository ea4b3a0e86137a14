// Package verify is the verification runner of spec 5.3 (INV-03: completion
// truth is external deterministic verification, not agent self-report). The
// work item actor calls Runner.Run from a goroutine after an attempt ends,
// with the approved plan's checks and the attempt's sandbox work dir; the
// Report says whether the work is done.
//
// # Isolation
//
// The Runner owns a sandbox.Manager used only for verification (configure
// it with its own root, for example <data_dir>/sandbox/verify), never the
// executor's. Every check runs in a fresh instance of it, created after the
// agent's attempt, with
//
//   - the command as ["/bin/sh", "-c", check.run], entered through a fixed
//     shell that only changes to the artifacts directory (checkArgs): run
//     is the planner's shell text, approved by the owner with the plan, and
//     is passed as an argument, never spliced into other text;
//   - PATH, HOME and the hardening variables of checkEnv in the
//     environment: no secrets, no agent context, nothing of the server's
//     environment (spec 5.3 names only PATH and HOME; the hardening
//     variables are fixed values that only take ambient code paths away);
//   - no network unless check.network; a backend that cannot isolate the
//     network refuses, and Run fails closed with ErrUnavailable;
//   - the check's timeout (default 60 s when zero) and the Options' memory,
//     CPU and output limits.
//
// # How a check sees the agent's artifacts
//
// The rule: a check that does not execute artifact code can only be
// influenced by the files it reads. The agent wrote the artifacts, so no
// tool a check runs may pick up code or configuration from them, or from
// HOME, without the check naming it:
//
//   - Snapshot. The content of the execution work dir is copied once into a
//     snapshot (an instance of the verification Manager in which nothing
//     runs), so the agent, or a process it left behind, cannot change what
//     the checks see once Run started. The copy never follows a symlink of
//     the agent's tree (see copyTree); FIFOs, sockets and devices are left
//     out; it is bounded by Options.MaxArtifactBytes and MaxArtifactFiles
//     (past them no check runs and every check fails with that reason); and
//     it leaves out what tools load by themselves (skipArtifact): every
//     node_modules (so require() from the artifacts' directory cannot
//     resolve a package the agent left), a .git that is a file or a symlink
//     (a pointer to a repository elsewhere), and in .git directories the
//     config, config.worktree, hooks and commondir entries (git's
//     fsmonitor, pager, filters, aliases, includes and hooks). git reads
//     the repository without them, with its defaults.
//   - Read-only, per check. Each check gets its own copy of the snapshot in
//     a separate artifacts directory (inside the 0700 work dir of another
//     instance, in which nothing runs): its working directory, bound
//     read-only through SandboxConfig.FilesystemRead, readable by any uid
//     (a backend may run the check as another uid) and writable by none. Under
//     the bwrap and namespaces backends the read-only bind is a boundary: a
//     write fails. The subprocess backend does not enforce FilesystemRead
//     and runs the check with the server's uid, so a check may undo the
//     permissions (a root server ignores them); there a write reaches only
//     that check's own copy, thrown away with it, never the agent's dir,
//     the snapshot or another check's view. A check that needs a writable
//     tree copies it: cp -r . "$HOME/w" && chmod -R u+w "$HOME/w".
//   - HOME is the check instance's own work dir: empty when the check
//     starts, writable, and not the artifacts, so ~/.gitconfig,
//     ~/.local/lib/python3.X/site-packages (usercustomize, sitecustomize,
//     .pth files), ~/.node_modules, ~/.npmrc and the like are the check's
//     own, never the agent's.
//   - Environment (checkEnv). Python: PYTHONSAFEPATH=1 keeps the working
//     directory and a script's directory off sys.path (Python 3.11 or
//     later), so a json.py among the artifacts does not shadow the standard
//     library and a sitecustomize.py there is not imported;
//     PYTHONNOUSERSITE=1 and PYTHONDONTWRITEBYTECODE=1. git: no system or
//     global config (GIT_CONFIG_NOSYSTEM=1, GIT_CONFIG_GLOBAL=/dev/null),
//     and at the command-line level, which outranks any config file that
//     still reaches it, core.fsmonitor=false, core.hooksPath=/dev/null and
//     safe.bareRepository=explicit (a bare repository among the artifacts
//     is not found by walking up); GIT_CEILING_DIRECTORIES stops git at the
//     artifacts, so it never finds a repository above them. Both layers,
//     the copy and the overrides, are kept on purpose: the overrides cover
//     git's code-running settings where a config reaches git in a way the
//     copy did not foresee; leaving the config out also covers the settings
//     no override can list (filter.<driver>.*, diff.<driver>.*, include
//     and includeIf, alias.*). safe.directory names the artifacts directory
//     alone, so git still reads it under a backend that runs the check as
//     another uid than the copy's owner. Node: NODE_PATH and
//     NODE_OPTIONS are unset and the copy holds no node_modules; the
//     ancestors of the artifacts directory are the verification root's,
//     which the operator chooses, outside the agent's sandbox.
//
// A check that does execute artifact code (python3 -m pytest, npm test,
// make, PYTHONPATH=. python3 ...) runs what the agent wrote, with all that
// code can do inside the verification sandbox; its verdict is only as good
// as the tests it runs. Such a check also lacks the artifacts'
// node_modules: it installs its dependencies itself (with network: true)
// or runs tests that need none.
//
// # Predicates
//
// Each check has exactly one predicate (messages.Expectation.Validate); an
// invalid check, one without a predicate included, fails with a reason
// instead of passing (spec 5.3's "No expectation" pass contradicts
// models 3.3, which makes it a schema error; INV-03 wins). A check that
// timed out fails with "Timeout after Ns", and one killed by a signal fails,
// whatever its predicate. Otherwise the predicate decides, on stdout:
//
//   - exit_code: the exit status equals it (other predicates ignore the
//     exit status, so `grep -c x f` expecting "0" works though grep exits 1);
//   - equals: stdout with one trailing "\n" (or "\r\n") removed equals it
//     exactly. The spec says "exact match"; the one line end is dropped
//     because nearly every command prints one and plans write `equals: "0"`.
//     Leading and inner whitespace count;
//   - contains: stdout contains it;
//   - regex: Go RE2 syntax, unanchored search (Python's re.search), on
//     stdout with one trailing line end removed (so "$" behaves as in
//     Python); compiled once per check, and an invalid pattern fails the
//     check;
//   - output_lt / output_gt: stdout without surrounding whitespace parses as
//     a finite float64 and compares strictly; anything else fails, saying
//     why;
//   - file_exists: a relative path names a file in the check's artifacts
//     directory (its working directory), an absolute one must lie in a configured
//     project directory (messages.Expectation.ValidatePath); ".." is
//     rejected; then every symlink on the path is resolved and the result
//     must still lie inside an allowed directory (also resolved), so a link
//     cannot point the check at /etc/passwd. It is evaluated on the host
//     after the command ran;
//   - not_empty: stdout holds something other than whitespace.
//
// stdout is captured up to Options.MaxOutputBytes. Past it, equals, regex and
// the numeric predicates fail closed (their answer on a prefix could be
// wrong), contains passes only if the prefix contains the text, and
// not_empty passes.
//
// # Report
//
// Checks run one after another, in order, and all of them run even after one
// fails, so the planner sees every failure. Report.Passed is true only when
// every check passed (and for an empty list). A CheckResult keeps at most
// 1000 characters of stdout (MaxReportOutputChars). Report.Map is the entry
// the work item actor appends to WorkItem.verification_results: {all_passed,
// results: [{name, passed, exit_code, output, reason, duration_seconds,
// timed_out}], failed: [names], timestamp}.
//
// Run returns an error only when its Report is not a verdict on the work:
// the context ended, the execution work dir is unusable (ErrExecDir), or the
// sandbox could not run a check (ErrUnavailable). It then stops; the Report
// holds the checks done so far and the one that could not run, and Passed is
// false.
package verify
