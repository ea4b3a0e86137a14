package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/silas-ai/silas/messages"
)

// The reports of a skill_install card, as much of them as the terminal
// shows (the JSON of skills.ValidationReport and skills.TransformationReport).
type (
	validationReport struct {
		Passed   bool `json:"passed"`
		Findings []struct {
			Severity string `json:"severity"`
			Rule     string `json:"rule"`
			File     string `json:"file"`
			Line     int    `json:"line"`
			Field    string `json:"field"`
			Message  string `json:"message"`
		} `json:"findings"`
		PythonVersion string `json:"python_version"`
	}
	transformationReport struct {
		Source struct {
			URI    string `json:"uri"`
			Commit string `json:"commit"`
			Format string `json:"format"`
		} `json:"source"`
		RemovedFields    []fieldChange `json:"removed_fields"`
		TranslatedFields []fieldChange `json:"translated_fields"`
		RewrittenScripts []struct {
			Original   string   `json:"original"`
			Entrypoint string   `json:"entrypoint"`
			Args       []string `json:"args"`
		} `json:"rewritten_scripts"`
		MovedFiles []struct {
			From string `json:"from"`
			To   string `json:"to"`
		} `json:"moved_files"`
		DroppedFiles []struct {
			Path   string `json:"path"`
			Reason string `json:"reason"`
		} `json:"dropped_files"`
		RemovedSecrets []struct {
			File string `json:"file"`
			Line int    `json:"line"`
			Kind string `json:"kind"`
		} `json:"removed_secrets"`
		ManualReview []struct {
			File    string `json:"file"`
			Line    int    `json:"line"`
			Message string `json:"message"`
		} `json:"manual_review"`
	}
	fieldChange struct {
		Field  string `json:"field"`
		To     string `json:"to"`
		Reason string `json:"reason"`
	}
)

// writeSkillCard prints a skill_install card: everything the approval
// installs. SKILL.md and every script are printed in full, line by line,
// through printable, so that a skill cannot hide a line from the owner
// with terminal control characters.
func writeSkillCard(out io.Writer, c *messages.SkillCard) {
	fmt.Fprintf(out, "  skill %s", printable(c.Name))
	if c.Version != "" {
		fmt.Fprintf(out, " %s", printable(c.Version))
	}
	fmt.Fprintf(out, " (%s, activation %s), skill hash %s\n", printable(c.Origin), printable(c.Activation), c.Hash)
	fmt.Fprintf(out, "  from: %s\n", printable(c.Dir))
	if c.Replaces != "" {
		fmt.Fprintf(out, "  replaces the installed version %s\n", c.Replaces)
	}
	fmt.Fprintf(out, "  description: %s\n", printable(c.Description))
	block := func(title, text string) {
		fmt.Fprintf(out, "  %s:\n", title)
		for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
			fmt.Fprintf(out, "    | %s\n", printable(l))
		}
	}
	block("SKILL.md", c.SkillMD)
	for _, s := range c.Scripts {
		block(fmt.Sprintf("script %s (sha256 %s)", printable(s.Path), short(s.SHA256)), s.Content)
	}
	fmt.Fprintf(out, "  files (%d):\n", len(c.Files))
	for _, f := range c.Files {
		note := ""
		switch {
		case f.Binary:
			note = " (binary)"
		case f.Omitted:
			note = " (not shown: too long)"
		}
		fmt.Fprintf(out, "    %s %7d %s%s\n", short(f.SHA256), f.Size, printable(f.Path), note)
	}
	if len(c.DryRuns) > 0 {
		fmt.Fprintf(out, "  dry runs in the sandbox after approval: %s\n", printable(strings.Join(c.DryRuns, "; ")))
	}
	writeValidation(out, c.ValidationReport)
	writeTransformation(out, c.TransformationReport)
}

func writeValidation(out io.Writer, raw json.RawMessage) {
	var r validationReport
	if len(raw) == 0 || json.Unmarshal(raw, &r) != nil {
		fmt.Fprintln(out, "  validation report: missing")
		return
	}
	verdict := "passed"
	if !r.Passed {
		verdict = "FAILED"
	}
	fmt.Fprintf(out, "  validation report: %s (%d findings", verdict, len(r.Findings))
	if r.PythonVersion != "" {
		fmt.Fprintf(out, ", Python %s", printable(r.PythonVersion))
	}
	fmt.Fprintln(out, ")")
	for _, f := range r.Findings {
		loc := f.File
		if f.Line > 0 {
			loc = fmt.Sprintf("%s:%d", f.File, f.Line)
		}
		if f.Field != "" {
			loc += " (" + f.Field + ")"
		}
		fmt.Fprintf(out, "    %s %s: %s [%s]\n", f.Severity, printable(strings.TrimSpace(loc)), printable(f.Message), f.Rule)
	}
}

func writeTransformation(out io.Writer, raw json.RawMessage) {
	var r transformationReport
	if len(raw) == 0 || json.Unmarshal(raw, &r) != nil {
		return
	}
	fmt.Fprintf(out, "  transformation report: imported from %s (format %s", printable(r.Source.URI), printable(r.Source.Format))
	if r.Source.Commit != "" {
		fmt.Fprintf(out, ", commit %s", printable(r.Source.Commit))
	}
	fmt.Fprintln(out, ")")
	for _, f := range r.RemovedFields {
		fmt.Fprintf(out, "    removed field %s: %s\n", printable(f.Field), printable(f.Reason))
	}
	for _, f := range r.TranslatedFields {
		fmt.Fprintf(out, "    translated %s -> %s: %s\n", printable(f.Field), printable(f.To), printable(f.Reason))
	}
	for _, s := range r.RewrittenScripts {
		fmt.Fprintf(out, "    wrapped %s in %s (args: %s)\n", printable(s.Original), printable(s.Entrypoint), printable(strings.Join(s.Args, ", ")))
	}
	for _, m := range r.MovedFiles {
		fmt.Fprintf(out, "    moved %s -> %s\n", printable(m.From), printable(m.To))
	}
	for _, d := range r.DroppedFiles {
		fmt.Fprintf(out, "    dropped %s: %s\n", printable(d.Path), printable(d.Reason))
	}
	for _, s := range r.RemovedSecrets {
		fmt.Fprintf(out, "    removed a %s from %s:%d\n", printable(s.Kind), printable(s.File), s.Line)
	}
	for _, m := range r.ManualReview {
		fmt.Fprintf(out, "    review: %s %s\n", printable(m.File), printable(m.Message))
	}
}

// short is the first 12 characters of a hash.
func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
