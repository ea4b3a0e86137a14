package skills

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/silas-ai/silas/config"
	"github.com/silas-ai/silas/runtime/gates/guardrails"
)

// MaxBodyChars is where a SKILL.md body stops being cheap to load on
// activation (the Agent Skills guidance of under 5000 tokens); longer
// bodies get a warning to move detail into references/.
const MaxBodyChars = 20_000

// Options configure Validate. The zero value is the strictest setting with
// the spec's default bounds, except that it has no Runner (the Python check
// then fails closed).
type Options struct {
	// DescriptionMinChars and DescriptionMaxChars bound the description;
	// zero means 24 and 1024. The maximum is never above 1024.
	DescriptionMinChars int
	DescriptionMaxChars int
	// AllowProcessHeavyDescription turns the process lint into a warning
	// (config fail_on_process_heavy_description: false).
	AllowProcessHeavyDescription bool
	// AllowUndeclaredEnv turns undeclared environment reads into warnings
	// (config forbid_undeclared_env: false).
	AllowUndeclaredEnv bool
	// Python runs the syntax check; route it through the sandbox.
	Python Runner
}

// OptionsFromConfig maps silas.skills.validation onto Options.
func OptionsFromConfig(v config.SkillValidation, python Runner) Options {
	return Options{
		DescriptionMinChars:          v.DescriptionMinChars,
		DescriptionMaxChars:          v.DescriptionMaxChars,
		AllowProcessHeavyDescription: !v.FailOnProcessHeavyDescription,
		AllowUndeclaredEnv:           !v.ForbidUndeclaredEnv,
		Python:                       python,
	}
}

func (o Options) minChars() int {
	if o.DescriptionMinChars <= 0 {
		return 24
	}
	return o.DescriptionMinChars
}

func (o Options) maxChars() int {
	if o.DescriptionMaxChars <= 0 || o.DescriptionMaxChars > MaxDescriptionChars {
		return MaxDescriptionChars
	}
	return o.DescriptionMaxChars
}

// ValidateFS parses the skill at the root of fsys (dirName is its
// directory's name) and validates it. A skill that does not parse gets a
// report whose findings are the parse problems (rule "format") and a nil
// Skill. This is the install flow's entry point: the report goes on the
// skill_install card either way.
func ValidateFS(ctx context.Context, fsys fs.FS, dirName string, o Options) (*Skill, ValidationReport) {
	s, err := Parse(fsys, dirName)
	return finishValidate(ctx, s, err, dirName, o)
}

// ValidateDir is ValidateFS for the directory at dir, read through an
// os.Root.
func ValidateDir(ctx context.Context, dir string, o Options) (*Skill, ValidationReport) {
	s, err := ParseDir(dir)
	return finishValidate(ctx, s, err, path.Base(strings.ReplaceAll(dir, "\\", "/")), o)
}

func finishValidate(ctx context.Context, s *Skill, err error, dirName string, o Options) (*Skill, ValidationReport) {
	if err != nil {
		r := ValidationReport{Skill: dirName}
		var pe *ParseError
		if asParseError(err, &pe) {
			for _, p := range pe.Problems {
				r.add(SeverityError, RuleFormat, p.File, p.Line, p.Field, p.Message)
			}
		} else {
			r.add(SeverityError, RuleFormat, "", 0, "", err.Error())
		}
		r.finish()
		return nil, r
	}
	return s, Validate(ctx, s, o)
}

// Validate runs the deterministic install checks of spec 10.4 on a parsed
// skill: description bounds and quality, Python syntax of every .py file
// (through o.Python), reference and asset paths, and the forbidden
// patterns (credential literals in any text file, environment variables
// not in requirements.env, shell interpolation of arguments). The same
// skill and options always give the same report.
func Validate(ctx context.Context, s *Skill, o Options) ValidationReport {
	r := ValidationReport{Skill: s.Name, Version: s.Version, Hash: s.Hash(), Files: s.Files()}
	for _, sc := range s.scripts {
		r.Scripts = append(r.Scripts, sc.Path)
	}
	checkDescription(s, o, &r)
	if n := utf8.RuneCountInString(s.Body); n > MaxBodyChars {
		r.add(SeverityWarning, RuleSize, SkillFile, s.BodyLine, "",
			fmt.Sprintf("the instructions are %d characters; keep SKILL.md under %d and move detail into references/", n, MaxBodyChars))
	}
	if strings.TrimSpace(s.Body) == "" {
		r.add(SeverityError, RuleFormat, SkillFile, s.BodyLine, "", "the instructions (markdown after the front matter) are empty; say when and how to use the skill")
	}
	checkScripts(s, &r)
	checkReferences(s, &r)
	checkFiles(s, o, &r)
	checkPythonSyntax(ctx, s, o.Python, &r)
	r.finish()
	return r
}

// checkScripts reports scripts the executor cannot call properly and the
// connection-skill contract.
func checkScripts(s *Skill, r *ValidationReport) {
	for _, sc := range s.scripts {
		if !sc.Declared {
			r.add(SeverityWarning, RuleScripts, SkillFile, s.Line("script_args"), "script_args",
				fmt.Sprintf("%s has no script_args entry, so it can only run without arguments; declare its arguments (or declare it with no arguments: %q)", sc.Path, sc.Path+":"))
		}
	}
	for _, e := range s.entries {
		if !strings.HasPrefix(e.Path, DirScripts+"/") || strings.HasSuffix(e.Path, ".py") {
			continue
		}
		switch ext := path.Ext(e.Path); {
		case isShellScript(e.Path, e.Data) && !calledFromPython(s, e.Path):
			r.add(SeverityWarning, RuleScripts, e.Path, 0, "", "shell scripts are not entry points; the executor runs only Python scripts, so call it from a Python wrapper with an argument list")
		case slices.Contains([]string{".js", ".mjs", ".ts", ".rb", ".pl", ".php", ".ps1"}, ext):
			r.add(SeverityWarning, RuleScripts, e.Path, 0, "", "only Python scripts run as skill scripts; this file is not validated and cannot be called")
		}
	}
	if s.Connection != nil {
		if _, ok := s.Script(DirScripts + "/health_check.py"); !ok {
			r.add(SeverityError, RuleConnection, SkillFile, s.Line("type"), "type", "connection skills must include scripts/health_check.py (spec 10.5, 10.6)")
		}
	}
}

// calledFromPython reports whether a Python script of the skill names the
// helper file p (a wrapper that runs it).
func calledFromPython(s *Skill, p string) bool {
	name := path.Base(p)
	for _, e := range s.entries {
		if strings.HasPrefix(e.Path, DirScripts+"/") && strings.HasSuffix(e.Path, ".py") &&
			(strings.Contains(string(e.Data), `"`+name+`"`) || strings.Contains(string(e.Data), `'`+name+`'`)) {
			return true
		}
	}
	return false
}

// checkFiles scans every text file for credential literals and every
// script for shell interpolation and environment use.
func checkFiles(s *Skill, o Options, r *ValidationReport) {
	red := guardrails.NewSecretRedactor()
	allowed := map[string]bool{}
	for _, n := range sandboxEnvs {
		allowed[n] = true
	}
	for _, n := range s.Requirements.Env {
		allowed[n] = true
	}
	for _, e := range s.entries {
		if !isText(e.Data) {
			continue
		}
		for _, f := range findSecrets(e.Path, e.Data, red) {
			r.add(SeverityError, RuleCredential, e.Path, f.line, "", credentialMessage(f.kind))
		}
		switch {
		case strings.HasSuffix(e.Path, ".py"):
			lintPython(e.Path, string(e.Data), allowed, o, r)
		case isShellScript(e.Path, e.Data):
			lintShell(e.Path, string(e.Data), allowed, o, r)
		}
	}
}
