package skills_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/silas-ai/silas/skills"
)

const argsSkill = `---
name: args
description: Use when a test needs a skill whose scripts declare every kind of argument.
script_args:
  scripts/run.py:
    path: {type: string, max_length: 20, format: path}
    mode: {type: string, enum: [fast, slow], default: fast}
    ref: {type: string, pattern: '[a-z0-9._/-]+', required: false, max_length: 40}
    patch: {type: string, required: false, allow_leading_dash: true, max_length: 100}
    count: {type: integer, minimum: 1, maximum: 10, default: 3}
    ratio: {type: number, required: false, minimum: 0, maximum: 1}
    dry: {type: boolean, default: false}
    tags: {type: array, max_items: 3, items: {type: string, max_length: 5}, required: false}
  scripts/noargs.py:
---

# Args
Scripts: ` + "`scripts/run.py`, `scripts/noargs.py`" + `.
`

func argsFS() fstest.MapFS {
	return fstest.MapFS{
		"SKILL.md":          {Data: []byte(argsSkill)},
		"scripts/run.py":    {Data: []byte("print(1)\n")},
		"scripts/noargs.py": {Data: []byte("print(2)\n")},
		"scripts/plain.py":  {Data: []byte("print(3)\n")},
		"scripts/lib/h.py":  {Data: []byte("H = 1\n")},
	}
}

// fromJSON decodes args as a tool call's JSON arguments arrive.
func fromJSON(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestCheckArgsBuildsArgv(t *testing.T) {
	s, err := skills.Parse(argsFS(), "args")
	if err != nil {
		t.Fatal(err)
	}
	in, err := s.CheckArgs("scripts/run.py", fromJSON(t, `{"path":"src/a b.txt","ref":"main","patch":"--- a/x\n+++ b/x","count":5,"ratio":0.5,"dry":true,"tags":["x","y;z"]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"--path=src/a b.txt", "--mode=fast", "--ref=main", "--patch=--- a/x\n+++ b/x", "--count=5", "--ratio=0.5", "--dry=true", "--tags=x", "--tags=y;z"}
	if !slices.Equal(in.Args, want) {
		t.Fatalf("args %q\nwant %q", in.Args, want)
	}
	argv := in.Argv("/skill")
	if argv[0] != "python3" || argv[4] != "/skill/scripts/run.py" || !slices.Equal(argv[5:], want) {
		t.Fatalf("argv %q", argv)
	}
	if in.Hash != s.Hash() || in.Skill != "args" {
		t.Fatalf("invocation %+v", in)
	}
	// Defaults fill in; optional arguments without default are left out.
	in, err = s.CheckArgs("./scripts/run.py", map[string]any{"path": "."})
	if err != nil || !slices.Equal(in.Args, []string{"--path=.", "--mode=fast", "--count=3", "--dry=false"}) {
		t.Fatalf("defaults: %q %v", in.Args, err)
	}
	in, err = s.CheckArgs("scripts/noargs.py", nil)
	if err != nil || len(in.Args) != 0 {
		t.Fatalf("no args: %v", err)
	}
	in, err = s.CheckArgs("scripts/plain.py", map[string]any{})
	if err != nil || len(in.Args) != 0 {
		t.Fatalf("undeclared script without args: %v", err)
	}
}

// TestCheckArgsRejects: every violation of script_args is refused before
// anything starts, with no argv at all.
func TestCheckArgsRejects(t *testing.T) {
	s, err := skills.Parse(argsFS(), "args")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		script string
		args   string
		want   error
		msg    string
	}{
		{"missing required", "scripts/run.py", `{}`, skills.ErrBadArgs, `"path" is required`},
		{"unknown argument", "scripts/run.py", `{"path":"a","shell":"x"}`, skills.ErrBadArgs, `unknown argument "shell"`},
		{"too long", "scripts/run.py", `{"path":"aaaaaaaaaaaaaaaaaaaaa"}`, skills.ErrBadArgs, "21 characters long, at most 20"},
		{"NUL byte", "scripts/run.py", `{"path":"a\u0000b"}`, skills.ErrBadArgs, "NUL"},
		{"option injection", "scripts/run.py", `{"path":"-rf"}`, skills.ErrBadArgs, "starts with '-'"},
		{"option injection in array", "scripts/run.py", `{"path":"a","tags":["--x"]}`, skills.ErrBadArgs, "item 0"},
		{"path escaping the work dir", "scripts/run.py", `{"path":"../../etc"}`, skills.ErrBadArgs, "'..'"},
		{"absolute path", "scripts/run.py", `{"path":"/etc/passwd"}`, skills.ErrBadArgs, "absolute path"},
		{"enum", "scripts/run.py", `{"path":"a","mode":"turbo"}`, skills.ErrBadArgs, "not one of [fast, slow]"},
		{"pattern", "scripts/run.py", `{"path":"a","ref":"main; rm -rf /"}`, skills.ErrBadArgs, "does not match the pattern"},
		{"string for integer", "scripts/run.py", `{"path":"a","count":"5"}`, skills.ErrBadArgs, "expected a number"},
		{"fraction for integer", "scripts/run.py", `{"path":"a","count":2.5}`, skills.ErrBadArgs, "whole number"},
		{"below minimum", "scripts/run.py", `{"path":"a","count":0}`, skills.ErrBadArgs, "below the minimum"},
		{"above maximum", "scripts/run.py", `{"path":"a","ratio":1.5}`, skills.ErrBadArgs, "above the maximum"},
		{"string for boolean", "scripts/run.py", `{"path":"a","dry":"true"}`, skills.ErrBadArgs, "expected true or false"},
		{"object for string", "scripts/run.py", `{"path":{"x":1}}`, skills.ErrBadArgs, "expected text, got an object"},
		{"too many items", "scripts/run.py", `{"path":"a","tags":["a","b","c","d"]}`, skills.ErrBadArgs, "4 items, at most 3"},
		{"args for a script without schema", "scripts/plain.py", `{"x":"1"}`, skills.ErrBadArgs, "declares no arguments"},
		{"args for a script declared without arguments", "scripts/noargs.py", `{"x":"1"}`, skills.ErrBadArgs, "declares no arguments"},
		{"unknown script", "scripts/other.py", `{}`, skills.ErrUnknownScript, "scripts/noargs.py, scripts/plain.py, scripts/run.py"},
		{"helper module", "scripts/lib/h.py", `{}`, skills.ErrUnknownScript, ""},
		{"SKILL.md", "SKILL.md", `{}`, skills.ErrUnknownScript, ""},
		{"escaping script path", "../args/scripts/run.py", `{}`, skills.ErrUnknownScript, "escapes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in, err := s.CheckArgs(c.script, fromJSON(t, c.args))
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("err %v, want %v containing %q", err, c.want, c.msg)
			}
			if in.Script != "" || in.Args != nil || in.Skill != "" {
				t.Fatalf("a refused call produced an invocation: %+v", in)
			}
		})
	}
}

func TestCheckArgsBackgroundSkill(t *testing.T) {
	f := argsFS()
	f["SKILL.md"] = &fstest.MapFile{Data: []byte(strings.Replace(argsSkill, "script_args:", "activation: background\nscript_args:", 1))}
	s, err := skills.Parse(f, "args")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CheckArgs("scripts/noargs.py", nil); !errors.Is(err, skills.ErrNotInvocable) {
		t.Fatalf("background skill script: %v", err)
	}
	if len(s.DryRuns()) != 0 || len(s.ExecutorView().Scripts) != 0 {
		t.Fatal("a background skill offers scripts")
	}
}

func TestDryRunsAndSchema(t *testing.T) {
	f := argsFS()
	f["SKILL.md"] = &fstest.MapFile{Data: []byte(strings.Replace(argsSkill, "format: path}", "format: path, example: \"in.txt\"}", 1))}
	s, err := skills.Parse(f, "args")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, in := range s.DryRuns() {
		got = append(got, in.Script+" "+strings.Join(in.Args, " "))
	}
	want := []string{"scripts/noargs.py --help", "scripts/plain.py --help", "scripts/run.py --help",
		"scripts/run.py --path=in.txt --mode=fast --count=3 --dry=false"}
	if !slices.Equal(got, want) {
		t.Fatalf("dry runs %q\nwant %q", got, want)
	}
	sc, _ := s.Script("scripts/run.py")
	schema, err := json.Marshal(sc.JSONSchema())
	if err != nil {
		t.Fatal(err)
	}
	for _, frag := range []string{`"additionalProperties":false`, `"required":["path"]`, `"maxLength":20`, `"enum":["fast","slow"]`, `"pattern":"^(?:[a-z0-9._/-]+)$"`} {
		if !strings.Contains(string(schema), frag) {
			t.Errorf("schema lacks %s: %s", frag, schema)
		}
	}
}
