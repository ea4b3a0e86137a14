package skills

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Origin says where a loaded skill came from.
type Origin string

// Origins.
const (
	// OriginBundled skills are embedded in the binary (skills/bundled).
	OriginBundled Origin = "bundled"
	// OriginLocal skills live in skills_dir.
	OriginLocal Origin = "local"
)

// Entry is one skill of a Catalog.
type Entry struct {
	Skill  *Skill
	Origin Origin
	// Dir is the skill's host directory for local skills, "" for bundled.
	Dir string
}

// LoadProblem is a skill the loader could not take; the others load.
type LoadProblem struct {
	// Name is the directory's name.
	Name   string
	Origin Origin
	Dir    string
	Err    error
}

func (p LoadProblem) Error() string {
	return fmt.Sprintf("%s skill %s: %v", p.Origin, p.Name, p.Err)
}

// Catalog is the set of skills found at startup: the bundled ones and the
// immediate subdirectories of skills_dir (spec 10.2). It is immutable; load
// a new one to pick up changes. Being in the catalog does not make a skill
// usable: a skill runs only while the install record's manifest matches its
// files (persistence.Skills.Verify).
type Catalog struct {
	byName map[string]Entry
	names  []string
}

// Load scans bundled (one skill per top-level directory; pass
// bundled.FS()) and the immediate subdirectories of skillsDir. Directories
// whose names start with '.' or '_' (staging areas) are skipped. A skill
// that does not parse, or a local skill that reuses a bundled name, is
// reported in the problems and left out; it never stops the others. A
// missing skillsDir is an empty one.
func Load(skillsDir string, bundled fs.FS) (*Catalog, []LoadProblem) {
	c := &Catalog{byName: map[string]Entry{}}
	var probs []LoadProblem
	if bundled != nil {
		dirs, err := fs.ReadDir(bundled, ".")
		if err != nil {
			probs = append(probs, LoadProblem{Name: ".", Origin: OriginBundled, Err: err})
		}
		for _, d := range dirs {
			if !d.IsDir() || skipDir(d.Name()) {
				continue
			}
			sub, err := fs.Sub(bundled, d.Name())
			if err == nil {
				var s *Skill
				if s, err = Parse(sub, d.Name()); err == nil {
					c.add(Entry{Skill: s, Origin: OriginBundled})
					continue
				}
			}
			probs = append(probs, LoadProblem{Name: d.Name(), Origin: OriginBundled, Err: err})
		}
	}
	if skillsDir == "" {
		return c.done(), probs
	}
	dirs, err := os.ReadDir(skillsDir)
	if errors.Is(err, fs.ErrNotExist) {
		return c.done(), probs
	}
	if err != nil {
		return c.done(), append(probs, LoadProblem{Name: skillsDir, Origin: OriginLocal, Dir: skillsDir,
			Err: fmt.Errorf("cannot read skills_dir: %w; fix silas.skills_dir or its permissions", err)})
	}
	for _, d := range dirs {
		if skipDir(d.Name()) {
			continue
		}
		dir := filepath.Join(skillsDir, d.Name())
		p := LoadProblem{Name: d.Name(), Origin: OriginLocal, Dir: dir}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			p.Err = errors.New("is a symlink; put the skill directory itself in skills_dir")
		case !d.IsDir():
			continue
		default:
			if prev, dup := c.byName[d.Name()]; dup && prev.Origin == OriginBundled {
				p.Err = errors.New("has the name of a bundled skill; rename the directory and the skill")
				break
			}
			s, err := ParseDir(dir)
			if err != nil {
				p.Err = err
				break
			}
			c.add(Entry{Skill: s, Origin: OriginLocal, Dir: dir})
			continue
		}
		probs = append(probs, p)
	}
	return c.done(), probs
}

func skipDir(name string) bool { return strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") }

func (c *Catalog) add(e Entry) { c.byName[e.Skill.Name] = e }

func (c *Catalog) done() *Catalog {
	for n := range c.byName {
		c.names = append(c.names, n)
	}
	slices.Sort(c.names)
	return c
}

// Get returns the skill named name.
func (c *Catalog) Get(name string) (Entry, bool) {
	e, ok := c.byName[name]
	return e, ok
}

// Names lists the catalog's skills, sorted.
func (c *Catalog) Names() []string { return slices.Clone(c.names) }

// PlannerCandidates are the skills the planner may choose from (spec 10.3):
// the auto skills, sorted by name. Manual skills reach a plan only when the
// owner names them; background skills are listed by the owner too.
func (c *Catalog) PlannerCandidates() []*Skill {
	var out []*Skill
	for _, n := range c.names {
		if s := c.byName[n].Skill; s.Activation == ActivationAuto {
			out = append(out, s)
		}
	}
	return out
}

// Resolve turns a work item's skill list into skills, in list order
// without duplicates. A name the catalog lacks is ErrUnknownSkill; a
// manual skill that ownerNamed does not contain is ErrManualSkill. It does
// not check install records: verify each skill before use.
func (c *Catalog) Resolve(names []string, ownerNamed []string) ([]*Skill, error) {
	var out []*Skill
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			continue
		}
		seen[n] = true
		e, ok := c.byName[n]
		if !ok {
			return nil, fmt.Errorf("skill %q: %w", n, ErrUnknownSkill)
		}
		if e.Skill.Activation == ActivationManual && !slices.Contains(ownerNamed, n) {
			return nil, fmt.Errorf("skill %q: %w", n, ErrManualSkill)
		}
		out = append(out, e.Skill)
	}
	return out, nil
}
