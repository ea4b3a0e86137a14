package skills

import (
	"errors"

	"github.com/silas-ai/silas/skills/manifest"
)

// Sentinel errors of the skill engine; match them with errors.Is.
var (
	// ErrInvalidSkill means a skill directory or its SKILL.md breaks a rule
	// of spec 10.1. The error is a *ParseError listing every problem with
	// file, line and field: fix them and try again.
	ErrInvalidSkill = errors.New("invalid skill")

	// ErrBadArgs means script arguments break the script's declared
	// script_args schema; nothing was started. Correct the arguments (the
	// message names the argument and the rule).
	ErrBadArgs = errors.New("script arguments rejected")

	// ErrUnknownScript means the named script is not an invocable script of
	// the skill (only .py files under scripts/ are). Use a path from the
	// skill's script list.
	ErrUnknownScript = errors.New("no such skill script")

	// ErrNotInvocable means the skill's activation is background: it is
	// context only and its scripts never run.
	ErrNotInvocable = errors.New("background skills are context only; their scripts cannot run")

	// ErrUnknownSkill means a work item names a skill the catalog does not
	// hold. Install or import it first, or drop it from the plan.
	ErrUnknownSkill = errors.New("unknown skill")

	// ErrManualSkill means a plan lists a manual skill the owner did not
	// name. Manual skills enter a work item only when the owner asks for
	// them by name.
	ErrManualSkill = errors.New("manual skill not named by the owner")

	// ErrRemoteSource means an import was asked to fetch a URL. Imports read
	// local directories only: clone the repository first, then import the
	// directory.
	ErrRemoteSource = errors.New("skill import reads local directories only; clone the repository first (git clone URL DIR), then import the directory")

	// ErrImport means a source directory cannot be adapted into a skill; the
	// message says why and what to do.
	ErrImport = errors.New("skill import failed")

	// ErrChanged is manifest.ErrChanged: a skill's bytes differ from what
	// was approved. Re-approve the skill or restore its files.
	ErrChanged = manifest.ErrChanged
)
