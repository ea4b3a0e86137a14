package skills

import (
	"cmp"
	"slices"

	"github.com/silas-ai/silas/skills/manifest"
)

// Severity of a finding: errors fail validation, warnings are shown on the
// install card only.
type Severity string

// Severities.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
)

// Rules name what a finding checks; they are stable codes for the Review
// card and tests.
const (
	RuleFormat             = "format"              // spec 10.1 structure and front matter
	RuleDescriptionLength  = "description_length"  // configured description bounds
	RuleDescriptionQuality = "description_quality" // "when to use", not process
	RulePythonSyntax       = "python_syntax"       // every .py compiles
	RulePath               = "path"                // references and assets stay inside and exist
	RuleCredential         = "credential_literal"  // no secrets in any file
	RuleUndeclaredEnv      = "undeclared_env"      // only requirements.env variables are read
	RuleShell              = "shell_interpolation" // no shell strings built from arguments
	RuleScripts            = "scripts"             // script entry points and schemas
	RuleConnection         = "connection"          // connection skill contract (10.6)
	RuleSize               = "size"                // progressive disclosure budget
)

// Finding is one result of validation.
type Finding struct {
	Severity Severity `json:"severity"`
	Rule     string   `json:"rule"`
	// File is relative to the skill directory; Line is 1-based (0: none).
	File    string `json:"file,omitempty"`
	Line    int    `json:"line,omitempty"`
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
}

// ValidationReport is the spec's validation_report (10.4 step 3): what the
// deterministic checks found, attached to the skill_install review card.
// Findings are sorted by file, line, rule and message, so the same skill
// always yields the same report.
type ValidationReport struct {
	// Skill is the directory's name (the skill's name when it parsed).
	Skill   string `json:"skill"`
	Version string `json:"version,omitempty"`
	// Hash is the skill hash the install approval binds ("" if it did not
	// parse).
	Hash string `json:"hash,omitempty"`
	// Passed is true when no finding is an error.
	Passed   bool            `json:"passed"`
	Files    []manifest.File `json:"files,omitempty"`
	Scripts  []string        `json:"scripts,omitempty"`
	Findings []Finding       `json:"findings"`
	// PythonVersion is the interpreter that checked the scripts' syntax.
	PythonVersion string `json:"python_version,omitempty"`
}

// Errors returns the error findings.
func (r ValidationReport) Errors() []Finding {
	var out []Finding
	for _, f := range r.Findings {
		if f.Severity == SeverityError {
			out = append(out, f)
		}
	}
	return out
}

// finish sorts the findings and sets Passed.
func (r *ValidationReport) finish() {
	if r.Findings == nil {
		r.Findings = []Finding{}
	}
	slices.SortStableFunc(r.Findings, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Rule, b.Rule),
			cmp.Compare(a.Field, b.Field), cmp.Compare(a.Message, b.Message))
	})
	r.Findings = slices.Compact(r.Findings)
	r.Passed = len(r.Errors()) == 0
}

// add appends a finding.
func (r *ValidationReport) add(sev Severity, rule, file string, line int, field, msg string) {
	r.Findings = append(r.Findings, Finding{Severity: sev, Rule: rule, File: file, Line: line, Field: field, Message: msg})
}
