package skills

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// interpreterArgv is the program every skill script runs under, with the flags
// that keep it from writing bytecode next to the (read-only, hashed) skill
// files (-B), reading PYTHON* variables (-E) and loading the user site
// directory (-s).
var interpreterArgv = []string{"python3", "-B", "-E", "-s"}

// Invocation is a checked script call: the script's path in the skill and
// its argument list. It holds no shell string anywhere.
type Invocation struct {
	Skill  string   `json:"skill"`
	Hash   string   `json:"hash"`
	Script string   `json:"script"`
	Args   []string `json:"args"`
}

// Argv returns the argument list that runs the call with the skill
// directory mounted at skillDir: python3 -B -E -s <skillDir>/<script>
// <args...>. Pass it to sandbox.Command.Args as is.
func (in Invocation) Argv(skillDir string) []string {
	argv := slices.Clone(interpreterArgv)
	argv = append(argv, path.Join(skillDir, in.Script))
	return append(argv, in.Args...)
}

// CheckArgs checks args (as decoded from a JSON tool call: strings,
// float64 or json.Number, booleans, lists) against the script's declared
// script_args before anything starts, and returns the invocation to run.
// Unknown arguments, missing required ones and every schema violation are
// ErrBadArgs; a script that script_args does not declare runs only with no
// arguments. Absent arguments with a default are passed with the default,
// so the script sees exactly what the schema allowed. Each argument is one
// argv element "--name=value" (one per item for arrays, in declaration
// order), so no value can turn into a separate option.
func (s *Skill) CheckArgs(script string, args map[string]any) (Invocation, error) {
	if s.Activation == ActivationBackground {
		return Invocation{}, fmt.Errorf("skill %s: %w", s.Name, ErrNotInvocable)
	}
	p, err := skillPath(strings.TrimSpace(script))
	if err != nil {
		return Invocation{}, fmt.Errorf("skill %s: script %q: %w: %v", s.Name, script, ErrUnknownScript, err)
	}
	sc, ok := s.Script(p)
	if !ok {
		return Invocation{}, fmt.Errorf("skill %s: script %q: %w; the skill's scripts are %s", s.Name, script, ErrUnknownScript, strings.Join(s.scriptPaths(), ", "))
	}
	bad := func(format string, a ...any) error {
		return fmt.Errorf("skill %s: %s: %w: %s", s.Name, sc.Path, ErrBadArgs, fmt.Sprintf(format, a...))
	}
	declared := map[string]*ArgSpec{}
	for _, a := range sc.Args {
		declared[a.Name] = a
	}
	var unknown []string
	for k := range args {
		if declared[k] == nil {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		if len(sc.Args) == 0 {
			return Invocation{}, bad("the script declares no arguments, got %s", strings.Join(quoteAll(unknown), ", "))
		}
		return Invocation{}, bad("unknown argument %s; declared: %s", strings.Join(quoteAll(unknown), ", "), strings.Join(argNames(sc.Args), ", "))
	}
	out := make([]string, 0, len(sc.Args))
	total := 0
	for _, a := range sc.Args {
		v, present := args[a.Name]
		if !present || v == nil {
			if a.Default == nil {
				if a.Required {
					return Invocation{}, bad("argument %q is required", a.Name)
				}
				continue
			}
			v = a.Default
		}
		vals, err := a.render(v)
		if err != nil {
			return Invocation{}, bad("argument %q %v", a.Name, err)
		}
		for _, val := range vals {
			el := "--" + a.Name + "=" + val
			if len(el) > maxArgBytes {
				return Invocation{}, bad("argument %q is %d bytes, more than one argument may carry (%d); pass it as a file in the work dir", a.Name, len(el), maxArgBytes)
			}
			total += len(el) + 1
			out = append(out, el)
		}
	}
	if total > maxArgvBytes {
		return Invocation{}, bad("the arguments total %d bytes, more than %d; pass large inputs as files in the work dir", total, maxArgvBytes)
	}
	return Invocation{Skill: s.Name, Hash: s.Hash(), Script: sc.Path, Args: out}, nil
}

// DryRuns returns the invocations the install flow runs in the sandbox
// before indexing a skill (spec 10.4 step 5), in an empty work dir: for
// every invocable script "--help" (it must start, import its modules and
// parse its options), and, when the schema gives an example for at least
// one argument and every required argument has an example or default, one
// call with those values (examples must work in an empty work dir).
// Background skills have none.
func (s *Skill) DryRuns() []Invocation {
	if s.Activation == ActivationBackground {
		return nil
	}
	var out []Invocation
	for _, sc := range s.scripts {
		out = append(out, Invocation{Skill: s.Name, Hash: s.Hash(), Script: sc.Path, Args: []string{"--help"}})
		args := map[string]any{}
		complete := true
		for _, a := range sc.Args {
			switch {
			case a.Example != nil:
				args[a.Name] = a.Example
			case a.Default == nil && a.Required:
				complete = false
			}
		}
		if !complete || len(args) == 0 {
			continue
		}
		if in, err := s.CheckArgs(sc.Path, args); err == nil {
			out = append(out, in)
		}
	}
	return out
}

// JSONSchema returns the script's arguments as a JSON Schema object, for
// the executor's tool definition.
func (sc Script) JSONSchema() map[string]any {
	props := map[string]any{}
	required := []string{}
	for _, a := range sc.Args {
		props[a.Name] = a.JSONSchema()
		if a.Required {
			required = append(required, a.Name)
		}
	}
	return map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false}
}

func (s *Skill) scriptPaths() []string {
	out := make([]string, len(s.scripts))
	for i, sc := range s.scripts {
		out[i] = sc.Path
	}
	if len(out) == 0 {
		return []string{"(none)"}
	}
	return out
}

func argNames(args []*ArgSpec) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = a.Name
	}
	return out
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}
