package skills_test

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/silas-ai/silas/skills"
	"github.com/silas-ai/silas/skills/bundled"
)

// FuzzParse feeds arbitrary SKILL.md text to the parser: it must never
// panic, must fail only with ErrInvalidSkill, and whatever it accepts must
// satisfy the spec's rules and parse again to the same hash.
func FuzzParse(f *testing.F) {
	f.Add(skillMD)
	f.Add(argsSkill)
	f.Add("---\nname: demo\ndescription: x\n---\n")
	f.Add("---\n---\n")
	f.Add("---\nname: demo\ndescription: Use when\nscript_args:\n  scripts/count.py:\n    path: {type: array, items: {type: array}}\n---\nbody")
	f.Add("---\nname: &a demo\ndescription: *a\n---\n")
	f.Add("---\nmetadata: {a: {b: [1, 2, {c: d}]}}\nname: demo\ndescription: a description long enough\n---\n")
	f.Add("\ufeff---\r\nname: demo\r\ndescription: crlf line endings are fine here\r\n---\r\nbody\r\n")
	for _, n := range bundled.Names() {
		b, err := fs.ReadFile(bundled.FS(), n+"/SKILL.md")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(strings.Replace(string(b), "name: "+n, "name: demo", 1))
	}
	f.Fuzz(func(t *testing.T, md string) {
		fsys := demoFS()
		fsys["SKILL.md"] = &fstest.MapFile{Data: []byte(md)}
		s, err := skills.Parse(fsys, "demo")
		if err != nil {
			if !errors.Is(err, skills.ErrInvalidSkill) || s != nil {
				t.Fatalf("parse failed oddly: %v", err)
			}
			return
		}
		if s.Name != "demo" || s.Description == "" || len([]rune(s.Description)) > skills.MaxDescriptionChars {
			t.Fatalf("accepted a skill breaking the rules: %+v", s)
		}
		switch s.Activation {
		case skills.ActivationAuto, skills.ActivationManual, skills.ActivationBackground:
		default:
			t.Fatalf("activation %q", s.Activation)
		}
		again, err := skills.Parse(fsys, "demo")
		if err != nil || again.Hash() != s.Hash() {
			t.Fatalf("reparse: %v", err)
		}
		for _, sc := range s.Scripts() {
			if _, err := s.CheckArgs(sc.Path, map[string]any{}); err != nil && !errors.Is(err, skills.ErrBadArgs) && !errors.Is(err, skills.ErrNotInvocable) {
				t.Fatalf("check args: %v", err)
			}
		}
	})
}
