// Package script is the "script" gate provider of spec 5.5.4: it runs a
// gate's check command and decides from its exit status and output.
//
// Context values reach the script only as environment variables, never as
// part of a command line: the command is split into an argument vector
// once, from the gate's configuration (trusted text written by the owner or
// an approved plan), and executed without a shell. User-controlled text
// such as a message containing "'; rm -rf / #" is therefore inert data in
// SILAS_GATE_VALUE. The environment a script sees, and nothing of the
// daemon's:
//
//	PATH=/usr/local/bin:/usr/bin:/bin, LANG=C.UTF-8
//	HOME                    an empty directory of the run's own
//	SILAS_GATE_NAME         the gate's name
//	SILAS_GATE_TRIGGER      the trigger (every_user_message, ...)
//	SILAS_GATE_VALUE        the checked value as text (see gates.Extract)
//	SILAS_GATE_CONTEXT_JSON the whole evaluation context as a JSON object
//	SILAS_CTX_<KEY>         each top-level context value as text (strings
//	                        and numbers as they are, objects as JSON); KEY
//	                        is the key upper-cased, other characters "_"
//
// NUL bytes, which an environment cannot hold, are replaced by U+FFFD. A
// context too large for the environment (over 96 KiB in one variable) is an
// error, and a policy gate blocks.
//
// # Where a script runs
//
// Every run starts through the Options' sandbox.Manager, in a fresh
// instance, never on the host directly:
//
//   - the program is a script of the script directory (Options.Dir, owned
//     by the configuration): a relative path resolves against it, an
//     absolute one must lie in it, ".." is refused, and once every symlink
//     is resolved it must still lie in it and be a regular file. A name
//     without a slash is a program of the sandbox's PATH, which holds
//     system directories only. A script that cannot be resolved is an
//     error, and a policy gate blocks;
//   - the script directory is the only extra path the sandbox shows
//     (read-only) and the working directory; HOME is the instance's own
//     empty work dir, which must lie outside the script directory (the run
//     is refused otherwise, since every run sees that directory);
//   - no network: the gate configuration has no field to ask for it, so
//     none is ever given;
//   - the sandbox's memory and CPU limits, and a 30-second timeout on which
//     the whole process group is killed.
//
// What the sandbox hides depends on its backend: the namespaces and bwrap
// backends show nothing of the host but system directories and the script
// directory, so the data dir and the keys are out of reach; the subprocess
// backend, used only by explicit opt-in, isolates the network and the
// environment, not the filesystem.
//
// # Output and decision
//
// The script's standard output is read (up to 1 MiB) as lines:
//
//   - "key: value" lines are extracted values;
//   - the last non-empty line, if it is a JSON object with the single
//     reserved key "modified_context", is the script's context rewrite,
//     subject to the runner's allowlist.
//
// The decision, in the order of spec 5.5.4:
//
//  1. with check_expect: the expectation (exit_code, equals, contains,
//     regex, output_lt, output_gt, not_empty on the output without the
//     modified_context line; file_exists inside the permitted directories)
//     decides continue or block;
//  2. with extract: the extracted value is handed to the predicate
//     provider, which applies the gate's type (numeric_range, ...); a
//     missing key blocks;
//  3. otherwise: exit status 0 continues, any other status blocks.
package script
