// Package skills is Silas's skill engine (spec 10): SKILL.md parsing,
// install validation, argument checking, loading, resolution and import.
// It is pure: it starts no process (the Python syntax check and dry runs go
// through a Runner, which the daemon routes into the sandbox) and stores
// nothing (install records live in persistence.Skills).
//
// A skill is a directory holding SKILL.md (YAML front matter and markdown
// instructions) and optional scripts/, references/ and assets/. The pieces:
//
//   - Parse / ParseDir read a skill directory strictly (every rule of spec
//     10.1, problems located by file, line and field) into an immutable
//     *Skill holding its files and their hashes (package manifest: the skill
//     hash over name, version and every file's path and SHA-256).
//   - Validate / ValidateFS / ValidateDir run the deterministic install
//     checks of 10.4 and return the ValidationReport for the skill_install
//     card: description bounds and "when to use" quality, Python syntax,
//     reference and asset paths, credential literals, undeclared
//     environment variables, shell interpolation of arguments.
//   - (*Skill).CheckArgs checks a script call against script_args before
//     anything starts and returns an Invocation whose Argv is the argument
//     list to run; there is never a shell string.
//   - Load builds the Catalog from the bundled skills (package bundled) and
//     skills_dir; Catalog.Resolve maps a work item's skills list to skills.
//   - Import adapts OpenAI/Codex, Claude and OpenClaw skills into a staged
//     Silas skill with a TransformationReport (10.4.1).
//
// INV-06 (hash-bound activation) is enforced by the caller with
// persistence.Skills: an install record binds the approved manifest, and
// Verify (or InstalledSkill.Check against a fresh parse) must succeed
// before every script run; a changed byte is manifest.ErrChanged.
//
// The lint rules are deterministic and pattern based: they catch the
// common ways a script leaks a credential, reads the environment or builds
// a shell command, not every possible one. The sandbox remains the
// boundary: scripts run with the skill directory read-only, no network
// unless requirements.network, and only the requirements.env variables.
package skills
