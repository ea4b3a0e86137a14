package skills

import (
	"slices"
	"strings"

	"github.com/silas-ai/silas/skills/manifest"
)

// SkillFile is the name of a skill's definition file.
const SkillFile = "SKILL.md"

// Activation says who may bring a skill into a work item (spec 10.1).
type Activation string

// Activation modes.
const (
	// ActivationAuto skills are offered to the planner, which may list
	// them in a plan's skills.
	ActivationAuto Activation = "auto"
	// ActivationManual skills enter a work item only when the owner names
	// them.
	ActivationManual Activation = "manual"
	// ActivationBackground skills are context only: their instructions are
	// shown, their scripts never run.
	ActivationBackground Activation = "background"
)

// UI is the metadata the Review and Activity surfaces show.
type UI struct {
	DisplayName      string `json:"display_name,omitempty"`
	Icon             string `json:"icon,omitempty"`
	ShortDescription string `json:"short_description,omitempty"`
}

// Requirements are a skill's environment requirements. Env lists the
// environment variables its scripts may read (for credentials: keystore
// ref_id variables, never secret values); reading any other variable fails
// validation.
type Requirements struct {
	Env            []string `json:"env,omitempty"`
	Network        bool     `json:"network,omitempty"`
	Binaries       []string `json:"binaries,omitempty"`
	Packages       []string `json:"packages,omitempty"`
	PythonPackages []string `json:"python_packages,omitempty"`
	// Notes is free text (a plain string or list under requirements).
	Notes []string `json:"notes,omitempty"`
}

// Connection is the front matter of a connection-type skill (spec 10.6).
type Connection struct {
	AuthStrategy         string   `json:"auth_strategy"`
	InitialPermissions   []string `json:"initial_permissions,omitempty"`
	AvailablePermissions []string `json:"available_permissions,omitempty"`
}

// Auth strategies of connection skills (spec 10.6).
var authStrategies = []string{"device_code", "browser_redirect", "secure_input"}

// Script is an invocable script: a .py file under scripts/, with its
// declared arguments (nil when script_args does not name it: it then runs
// only without arguments).
type Script struct {
	Path string     `json:"path"`
	Args []*ArgSpec `json:"args,omitempty"`
	// Declared reports that script_args names the script.
	Declared bool `json:"declared"`
}

// Skill is a parsed skill directory: its front matter, its instructions
// and its files with their hashes. It is immutable once Parse returns; the
// manifest (and so the skill hash) is fixed at parse time.
type Skill struct {
	Name         string         `json:"name"`
	Description  string         `json:"description"`
	License      string         `json:"license,omitempty"`
	Activation   Activation     `json:"activation"`
	UI           UI             `json:"ui"`
	ComposesWith []string       `json:"composes_with,omitempty"`
	Requirements Requirements   `json:"requirements"`
	Metadata     map[string]any `json:"metadata,omitempty"`
	// Connection is set for type: connection skills.
	Connection *Connection `json:"connection,omitempty"`
	// Version is metadata.version, or "" when absent. It enters the hash.
	Version string `json:"version"`
	// Body is the markdown after the front matter: the full instructions.
	Body string `json:"body"`
	// BodyLine is the SKILL.md line the body starts on.
	BodyLine int `json:"body_line"`

	scripts  []Script
	entries  []manifest.Entry
	manifest manifest.Manifest
	// lines maps front matter fields to their SKILL.md lines, for findings.
	lines map[string]int
}

// Manifest returns the skill's content identity (files, hashes, skill
// hash), computed when it was parsed.
func (s *Skill) Manifest() manifest.Manifest {
	m := s.manifest
	m.Files = slices.Clone(m.Files)
	return m
}

// Hash is the skill hash (manifest.SkillHash).
func (s *Skill) Hash() string { return s.manifest.Hash }

// Files lists the skill's files with their hashes, sorted by path.
func (s *Skill) Files() []manifest.File { return slices.Clone(s.manifest.Files) }

// ReadFile returns a copy of the bytes of the file at path (as in Files)
// exactly as they were hashed. A caller that runs a script can materialise
// these bytes instead of re-reading the directory, so what runs is what
// was verified.
func (s *Skill) ReadFile(path string) ([]byte, bool) {
	i, ok := slices.BinarySearchFunc(s.entries, path, func(e manifest.Entry, p string) int { return strings.Compare(e.Path, p) })
	if !ok {
		return nil, false
	}
	return slices.Clone(s.entries[i].Data), true
}

// Scripts lists the invocable scripts (every .py under scripts/) in path
// order, with their argument schemas.
func (s *Skill) Scripts() []Script { return slices.Clone(s.scripts) }

// Script returns the invocable script at path.
func (s *Skill) Script(path string) (Script, bool) {
	for _, sc := range s.scripts {
		if sc.Path == path {
			return sc, true
		}
	}
	return Script{}, false
}

// Line returns the SKILL.md line of a front matter field ("description",
// "script_args"), or 1.
func (s *Skill) Line(field string) int {
	if l, ok := s.lines[field]; ok {
		return l
	}
	return 1
}

// Metadata is what the proxy sees of a skill (spec 10.3): cheap routing
// data only.
type Metadata struct {
	Name        string     `json:"name"`
	Description string     `json:"description"`
	Activation  Activation `json:"activation"`
}

// Meta returns the skill's routing metadata.
func (s *Skill) Meta() Metadata {
	return Metadata{Name: s.Name, Description: s.Description, Activation: s.Activation}
}
