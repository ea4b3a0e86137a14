// Package manifest is the content identity of a skill directory (spec 10.4,
// INV-06): the list of its files with their SHA-256 hashes and one skill
// hash over the skill's name, version and every file's relative path and
// hash. The install approval, the install record in Badger and the check
// before every script run all compare manifests, so a changed byte anywhere
// in a skill makes it a different skill that needs a new approval.
//
// It is a leaf package (standard library and runtime/canonical only) so
// that both the skills package and persistence can use it.
//
// Reading a directory is strict: every regular file is part of the
// manifest (hidden files and __pycache__ included: Python would run a stale
// .pyc), and a symlink, device, socket or pipe anywhere in the tree is an
// error, as are trees past the limits below.
package manifest
