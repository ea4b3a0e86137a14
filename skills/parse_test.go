package skills_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/silas-ai/silas/skills"
)

func TestParseValidSkill(t *testing.T) {
	s, err := skills.Parse(demoFS(), "demo")
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "demo" || s.Activation != skills.ActivationAuto || len(s.Requirements.Env) != 1 || s.BodyLine != 11 {
		t.Fatalf("parsed %+v", s)
	}
	sc, ok := s.Script("scripts/count.py")
	if !ok || !sc.Declared || len(sc.Args) != 1 || sc.Args[0].Name != "path" || !sc.Args[0].Required || sc.Args[0].MaxLength != 300 {
		t.Fatalf("script %+v", sc)
	}
	if len(s.Files()) != 3 || len(s.Hash()) != 64 {
		t.Fatalf("files %v hash %q", s.Files(), s.Hash())
	}
	data, ok := s.ReadFile("scripts/count.py")
	if !ok || string(data) != countPy {
		t.Fatal("ReadFile does not return the hashed bytes")
	}
	data[0] = 'X' // a copy: the skill stays intact
	if again, _ := s.ReadFile("scripts/count.py"); string(again) != countPy {
		t.Fatal("ReadFile exposes the skill's own buffer")
	}
	if s.Line("description") != 3 {
		t.Fatalf("description line %d", s.Line("description"))
	}
}

// TestParseRejects: every violation of spec 10.1 fails with a message that
// names the file, the line and the field.
func TestParseRejects(t *testing.T) {
	long := strings.Repeat("word ", 210)
	cases := []struct {
		name  string
		fsys  func(t *testing.T) fstest.MapFS
		dir   string
		file  string
		line  int
		field string
		msg   string
	}{
		{"bad name", func(t *testing.T) fstest.MapFS { return replaceInSkill(t, "name: demo", "name: Demo_Skill") }, "demo", "SKILL.md", 2, "name", "only lowercase letters, digits and hyphens"},
		{"name with double hyphen", func(t *testing.T) fstest.MapFS { return replaceInSkill(t, "name: demo", "name: de--mo") }, "de--mo", "SKILL.md", 2, "name", "single hyphens"},
		{"name not matching directory", func(t *testing.T) fstest.MapFS { return replaceInSkill(t, "name: demo", "name: other") }, "demo", "SKILL.md", 2, "name", `"other" does not match the directory name "demo"`},
		{"name is a number", func(t *testing.T) fstest.MapFS { return replaceInSkill(t, "name: demo", "name: 123") }, "123", "SKILL.md", 2, "name", "expected text"},
		{"missing name", func(t *testing.T) fstest.MapFS { return replaceInSkill(t, "name: demo\n", "") }, "demo", "SKILL.md", 2, "name", "is missing"},
		{"missing description", func(t *testing.T) fstest.MapFS {
			return replaceInSkill(t, "description: Use when the user asks to count the words of a text file in the work dir.\n", "")
		}, "demo", "SKILL.md", 2, "description", "is missing"},
		{"description too long", func(t *testing.T) fstest.MapFS {
			return replaceInSkill(t, "description: Use when", "description: Use when "+long)
		}, "demo", "SKILL.md", 3, "description", "at most 1024 are allowed"},
		{"bad activation", func(t *testing.T) fstest.MapFS { return replaceInSkill(t, "activation: auto", "activation: always") }, "demo", "SKILL.md", 4, "activation", `"always" is not a mode`},
		{"platform field", func(t *testing.T) fstest.MapFS {
			return replaceInSkill(t, "activation: auto", "activation: auto\nallowed-tools: Bash")
		}, "demo", "SKILL.md", 5, "allowed-tools", "not a Silas skill field"},
		{"duplicate field", func(t *testing.T) fstest.MapFS {
			return replaceInSkill(t, "activation: auto", "activation: auto\nactivation: manual")
		}, "demo", "SKILL.md", 5, "activation", "appears twice"},
		{"no front matter", func(t *testing.T) fstest.MapFS { return withFile(demoFS(), "SKILL.md", "# Demo\n") }, "demo", "SKILL.md", 1, "", "must start with YAML front matter"},
		{"unclosed front matter", func(t *testing.T) fstest.MapFS { return withFile(demoFS(), "SKILL.md", "---\nname: demo\n") }, "demo", "SKILL.md", 1, "", "not closed"},
		{"yaml syntax", func(t *testing.T) fstest.MapFS {
			return replaceInSkill(t, "activation: auto", "activation: [auto")
		}, "demo", "SKILL.md", 0, "", "not valid YAML"},
		{"anchors", func(t *testing.T) fstest.MapFS {
			return replaceInSkill(t, "activation: auto", "activation: &a auto\nlicense: *a")
		}, "demo", "SKILL.md", 4, "", "anchors and aliases"},
		{"script_args escaping the skill", func(t *testing.T) fstest.MapFS {
			return replaceInSkill(t, "  scripts/count.py:\n", "  ../evil.py:\n    x: {type: string}\n  scripts/count.py:\n")
		}, "demo", "SKILL.md", 8, "script_args.../evil.py", "escapes the skill directory"},
		{"script_args of a missing script", func(t *testing.T) fstest.MapFS {
			return replaceInSkill(t, "  scripts/count.py:\n", "  scripts/gone.py:\n    x: {type: string}\n  scripts/count.py:\n")
		}, "demo", "SKILL.md", 8, "script_args.scripts/gone.py", "does not exist"},
		{"script_args of a shell script", func(t *testing.T) fstest.MapFS {
			f := replaceInSkill(t, "  scripts/count.py:\n", "  scripts/run.sh:\n    x: {type: string}\n  scripts/count.py:\n")
			return withFile(f, "scripts/run.sh", "echo hi\n")
		}, "demo", "SKILL.md", 8, "script_args.scripts/run.sh", "only Python scripts"},
		{"bad arg type", func(t *testing.T) fstest.MapFS {
			return replaceInSkill(t, "{type: string, max_length: 300, format: path}", "{type: str}")
		}, "demo", "SKILL.md", 9, "script_args.scripts/count.py.path.type", `"str" is not a type`},
		{"bad arg name", func(t *testing.T) fstest.MapFS { return replaceInSkill(t, "    path: {", "    Path: {") }, "demo", "SKILL.md", 9, "script_args.scripts/count.py.Path", "argument names"},
		{"unknown schema key", func(t *testing.T) fstest.MapFS {
			return replaceInSkill(t, "format: path}", "format: path, maxLength: 3}")
		}, "demo", "SKILL.md", 9, "script_args.scripts/count.py.path.maxLength", "unknown schema key"},
		{"default breaking the schema", func(t *testing.T) fstest.MapFS {
			return replaceInSkill(t, "{type: string, max_length: 300, format: path}", `{type: string, max_length: 3, default: "toolong"}`)
		}, "demo", "SKILL.md", 9, "script_args.scripts/count.py.path.default", "at most 3 are allowed"},
		{"bad pattern", func(t *testing.T) fstest.MapFS {
			return replaceInSkill(t, "format: path}", "format: path, pattern: '[a-'}")
		}, "demo", "SKILL.md", 9, "script_args.scripts/count.py.path.pattern", "not a valid RE2"},
		{"enum of the wrong type", func(t *testing.T) fstest.MapFS {
			return replaceInSkill(t, "{type: string, max_length: 300, format: path}", "{type: integer, enum: [1, two]}")
		}, "demo", "SKILL.md", 9, "script_args.scripts/count.py.path.enum", "expected a number"},
		{"array without items", func(t *testing.T) fstest.MapFS {
			return replaceInSkill(t, "{type: string, max_length: 300, format: path}", "{type: array}")
		}, "demo", "SKILL.md", 9, "script_args.scripts/count.py.path.items", "is missing"},
		{"icon escaping the skill", func(t *testing.T) fstest.MapFS {
			return replaceInSkill(t, "activation: auto", "activation: auto\nui:\n  icon: ../icon.svg")
		}, "demo", "SKILL.md", 6, "ui.icon", "escapes the skill directory"},
		{"absolute icon", func(t *testing.T) fstest.MapFS {
			return replaceInSkill(t, "activation: auto", "activation: auto\nui:\n  icon: /etc/icon.svg")
		}, "demo", "SKILL.md", 6, "ui.icon", "absolute path"},
		{"missing icon", func(t *testing.T) fstest.MapFS {
			return replaceInSkill(t, "activation: auto", "activation: auto\nui:\n  icon: ./assets/icon.svg")
		}, "demo", "SKILL.md", 6, "ui.icon", "assets/icon.svg does not exist"},
		{"bad env name", func(t *testing.T) fstest.MapFS { return replaceInSkill(t, "env: [DEMO_REF]", "env: [DEMO-REF]") }, "demo", "SKILL.md", 6, "requirements.env", "not an environment variable name"},
		{"connection without auth strategy", func(t *testing.T) fstest.MapFS {
			return replaceInSkill(t, "activation: auto", "activation: auto\ntype: connection")
		}, "demo", "SKILL.md", 5, "auth_strategy", "is required for connection skills"},
		{"connection field without type", func(t *testing.T) fstest.MapFS {
			return replaceInSkill(t, "activation: auto", "activation: auto\nauth_strategy: device_code")
		}, "demo", "SKILL.md", 5, "auth_strategy", "add type: connection"},
		{"huge mapping", func(t *testing.T) fstest.MapFS {
			return replaceInSkill(t, "activation: auto", "activation: auto\nmetadata: {"+strings.Repeat("a: b, ", 9000)+"}")
		}, "demo", "SKILL.md", 5, "", "a mapping has more than 512 keys"},
		{"stray top-level file", func(t *testing.T) fstest.MapFS { return withFile(demoFS(), "notes.txt", "x") }, "demo", "notes.txt", 0, "", "not allowed at the top"},
		{"stray directory", func(t *testing.T) fstest.MapFS { return withFile(demoFS(), "templates/a.txt", "x") }, "demo", "templates/a.txt", 0, "", "which a skill does not have"},
		{"missing SKILL.md", func(t *testing.T) fstest.MapFS {
			f := demoFS()
			delete(f, "SKILL.md")
			return f
		}, "demo", "SKILL.md", 0, "", "is missing"},
		{"not UTF-8", func(t *testing.T) fstest.MapFS { return withFile(demoFS(), "SKILL.md", "---\nname: d\xffmo\n---\n") }, "demo", "SKILL.md", 0, "", "not valid UTF-8"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := skills.Parse(c.fsys(t), c.dir)
			var pe *skills.ParseError
			if s != nil || !errors.Is(err, skills.ErrInvalidSkill) || !errors.As(err, &pe) {
				t.Fatalf("parse: %v (skill %v), want a ParseError", err, s)
			}
			for _, p := range pe.Problems {
				if p.File == c.file && (c.line == 0 || p.Line == c.line) && p.Field == c.field && strings.Contains(p.Message, c.msg) {
					if !strings.Contains(err.Error(), p.String()) {
						t.Fatalf("error text %q lacks %q", err, p)
					}
					return
				}
			}
			t.Fatalf("no problem %s:%d %s %q in:\n%v", c.file, c.line, c.field, c.msg, err)
		})
	}
}

func TestParseDirRefusesSymlinks(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	writeTree(t, dir, demoFS())
	secret := filepath.Join(t.TempDir(), "id_rsa")
	if err := os.WriteFile(secret, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(dir, "references", "key.md")); err != nil {
		t.Fatal(err)
	}
	_, err := skills.ParseDir(dir)
	if !errors.Is(err, skills.ErrInvalidSkill) || !strings.Contains(err.Error(), "references/key.md is a symlink") {
		t.Fatalf("symlink: %v", err)
	}
	if err := os.Remove(filepath.Join(dir, "references", "key.md")); err != nil {
		t.Fatal(err)
	}
	s, err := skills.ParseDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	fromFS, err := skills.Parse(demoFS(), "demo")
	if err != nil || fromFS.Hash() != s.Hash() {
		t.Fatalf("the same skill on disk and in memory hash differently: %v", err)
	}
}

func TestParseOptionalFields(t *testing.T) {
	f := replaceInSkill(t, "activation: auto", `activation: manual
license: MIT
ui:
  display_name: "Demo"
  icon: ./assets/icon.svg
  short_description: "Count words"
composes_with: [coding]
metadata:
  version: 2.1.0
  author: someone
  tags: [a, b]`)
	f = withFile(f, "assets/icon.svg", "<svg/>")
	s, err := skills.Parse(f, "demo")
	if err != nil {
		t.Fatal(err)
	}
	if s.Activation != skills.ActivationManual || s.License != "MIT" || s.UI.Icon != "assets/icon.svg" ||
		s.Version != "2.1.0" || s.ComposesWith[0] != "coding" || s.Metadata["author"] != "someone" {
		t.Fatalf("parsed %+v", s)
	}
	if s.Manifest().Version != "2.1.0" {
		t.Fatal("the version is not part of the manifest")
	}
}
