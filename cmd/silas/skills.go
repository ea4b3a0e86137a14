package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/silas-ai/silas/ownerapi"
	"github.com/silas-ai/silas/skills"
)

const skillsUsage = `Usage: silas skills <list|show|install|import|remove> [flags]

Skills give Silas new capabilities (spec 10). A skill runs only once you
approved it: install and import validate the skill and put its card (its
SKILL.md, every script and the validation report) in the Silas app's Review
and in ` + "`silas chat`" + `; nothing is installed until you approve it there. The
commands talk to the running daemon, which owns the database: start it with
"silas serve" first.

  silas skills list                  installed skills, pending installs, problems
  silas skills show <name>           a skill's instructions, files and scripts
  silas skills install <dir>         validate a skill directory and ask for approval
  silas skills import <dir> [--format claude|openai|openclaw|silas] [--name N]
                                     adapt a skill from another assistant, then
                                     the same as install (git URLs: clone first)
  silas skills remove <name>         uninstall a skill and delete its files
`

// skillsClientTimeout bounds one call: install and import validate the
// skill in a sandbox before they answer.
const skillsClientTimeout = 2 * time.Minute

func runSkills(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stderr, skillsUsage)
		if len(args) == 0 {
			return &exitError{code: 2, err: errors.New("skills: no subcommand given")}
		}
		return nil
	}
	sub, rest := args[0], args[1:]
	fs := newFlagSet("skills "+sub, "Manage skills through the running daemon.", stderr)
	var c common
	c.register(fs)
	daemonURL := fs.String("url", "", "daemon URL (default http://<silas.channels.web.host>:<port>)")
	format := fs.String("format", "", "import: the source's format (claude, openai, openclaw, silas); detected when left out")
	name := fs.String("name", "", "import: the skill's name in Silas (default: from the source)")
	asJSON := fs.Bool("json", false, "print the daemon's JSON answer")
	pos, err := parseInterspersed(fs, rest)
	if err != nil {
		return err
	}
	one := func(what string) (string, error) {
		if len(pos) != 1 {
			return "", &exitError{code: 2, err: fmt.Errorf("usage: silas skills %s %s", sub, what)}
		}
		return pos[0], nil
	}
	var arg string
	switch sub {
	case "list":
		if len(pos) != 0 {
			return &exitError{code: 2, err: errors.New("skills list takes no arguments")}
		}
	case "show", "remove":
		arg, err = one("<name>")
	case "install", "import":
		arg, err = one("<dir>")
	default:
		fmt.Fprint(stderr, skillsUsage)
		return &exitError{code: 2, err: fmt.Errorf("unknown skills subcommand %q", sub)}
	}
	if err != nil {
		return err
	}
	_, tok, base, err := daemonAddress(&c, *daemonURL)
	if err != nil {
		return err
	}
	cl := &daemonClient{base: base, token: tok, http: &http.Client{Timeout: skillsClientTimeout}}
	out := &skillsOut{w: stdout, json: *asJSON}

	switch sub {
	case "list":
		var r ownerapi.SkillsResponse
		if err := cl.call(ctx, "GET", "/skills", nil, &r, out); err != nil {
			return err
		}
		return out.list(r)
	case "show":
		var r ownerapi.SkillDetail
		if err := cl.call(ctx, "GET", "/skills/"+url.PathEscape(arg), nil, &r, out); err != nil {
			return err
		}
		return out.show(r)
	case "remove":
		var r ownerapi.SkillRemoved
		if err := cl.call(ctx, "DELETE", "/skills/"+url.PathEscape(arg), nil, &r, out); err != nil {
			return err
		}
		return out.line(r.Message)
	}
	// install, import: the daemon reads the directory, so give it an
	// absolute path. A URL stays as typed: the daemon explains.
	dir := arg
	if !strings.Contains(dir, "://") && !strings.Contains(dir, "@") {
		if dir, err = filepath.Abs(arg); err != nil {
			return fmt.Errorf("skill directory %q: %w", arg, err)
		}
	}
	var r ownerapi.SkillRequestView
	if sub == "install" {
		err = cl.call(ctx, "POST", "/skills/install", ownerapi.SkillInstallBody{Dir: dir}, &r, out)
	} else {
		err = cl.call(ctx, "POST", "/skills/import", ownerapi.SkillImportBody{Dir: dir, Format: *format, Name: *name}, &r, out)
	}
	if err != nil {
		return err
	}
	return out.requested(r)
}

// call sends one request; a refusal is printed with its reports (to out)
// and returned as an error.
func (c *daemonClient) call(ctx context.Context, method, path string, in, v any, out *skillsOut) error {
	status, b, err := c.send(ctx, method, path, in, 16<<20)
	if err != nil {
		return err
	}
	if out.json {
		out.raw(b)
	}
	if status >= 300 {
		var r ownerapi.SkillRefusal
		if json.Unmarshal(b, &r) != nil || r.Message == "" {
			return fmt.Errorf("%s %s: HTTP %d", method, path, status)
		}
		if !out.json {
			out.reports(r.ValidationReport, r.TransformationReport)
		}
		return fmt.Errorf("silas refused: %s", r.Message)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("decode the answer of %s %s: %w", method, path, err)
	}
	return nil
}

// skillsOut prints the answers for a terminal (or as JSON with --json).
type skillsOut struct {
	w    io.Writer
	json bool
}

func (o *skillsOut) raw(b []byte) {
	var buf bytes.Buffer
	if json.Indent(&buf, b, "", "  ") == nil {
		b = buf.Bytes()
	}
	fmt.Fprintf(o.w, "%s\n", b)
}

func (o *skillsOut) line(s string) error {
	if !o.json {
		fmt.Fprintln(o.w, s)
	}
	return nil
}

func (o *skillsOut) list(r ownerapi.SkillsResponse) error {
	if o.json {
		return nil
	}
	tw := tabwriter.NewWriter(o.w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tVERSION\tORIGIN\tSTATUS\tHASH\tDESCRIPTION")
	for _, s := range r.Skills {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", s.Name, dash(s.Version), dash(s.Origin), s.Status, short(s.Hash), clip(s.Description, 60))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, s := range r.Skills {
		if s.Problem != "" {
			fmt.Fprintf(o.w, "! %s %s: %s\n", s.Name, s.Status, s.Problem)
		}
		if s.Status == "not_installed" {
			fmt.Fprintf(o.w, "! %s is in skills_dir but not approved: run `silas skills install %s`\n", s.Name, s.Dir)
		}
	}
	for _, p := range r.Pending {
		fmt.Fprintf(o.w, "pending: %s (%s, hash %s) waits for your approval in the app or `silas chat` until %s (request %s)\n",
			p.Skill, p.Origin, short(p.Hash), p.ExpiresAt.Local().Format(time.DateTime), p.RequestID)
	}
	for _, p := range r.Problems {
		fmt.Fprintf(o.w, "not loaded: %s (%s): %s\n", p.Name, p.Origin, p.Error)
	}
	return nil
}

func (o *skillsOut) show(d ownerapi.SkillDetail) error {
	if o.json {
		return nil
	}
	w := o.w
	fmt.Fprintf(w, "%s %s (%s, %s)\n", d.Name, dash(d.Version), d.Origin, d.Status)
	fmt.Fprintf(w, "description: %s\n", d.Description)
	fmt.Fprintf(w, "activation:  %s\n", d.Activation)
	fmt.Fprintf(w, "hash:        %s\n", d.Hash)
	if d.Dir != "" {
		fmt.Fprintf(w, "dir:         %s\n", d.Dir)
	}
	if d.InstalledAt != nil {
		fmt.Fprintf(w, "installed:   %s (%s", d.InstalledAt.Local().Format(time.DateTime), d.Source)
		if d.ApprovalTokenID != "" {
			fmt.Fprintf(w, ", approval %s", d.ApprovalTokenID)
		}
		fmt.Fprintln(w, ")")
	}
	if d.Problem != "" {
		fmt.Fprintf(w, "problem:     %s\n", d.Problem)
	}
	if len(d.ScriptArgs) > 0 {
		fmt.Fprintln(w, "scripts:")
		for _, sc := range d.ScriptArgs {
			schema, _ := json.Marshal(sc.JSONSchema())
			fmt.Fprintf(w, "  %s %s\n", sc.Path, schema)
		}
	}
	fmt.Fprintln(w, "files:")
	for _, f := range d.Files {
		fmt.Fprintf(w, "  %s  %7d  %s\n", short(f.SHA256), f.Size, f.Path)
	}
	fmt.Fprintf(w, "\n%s\n", strings.TrimSpace(d.Instructions))
	return nil
}

func (o *skillsOut) requested(r ownerapi.SkillRequestView) error {
	if o.json {
		return nil
	}
	o.reports(r.ValidationReport, r.TransformationReport)
	fmt.Fprintf(o.w, "Request %s: %s\n", r.RequestID, r.Message)
	return nil
}

// reports prints a validation report's findings and what an import
// changed.
func (o *skillsOut) reports(v *skills.ValidationReport, t *skills.TransformationReport) {
	w := o.w
	if t != nil {
		fmt.Fprintf(w, "import from %s (format %s", t.Source.URI, t.Source.Format)
		if t.Source.Commit != "" {
			fmt.Fprintf(w, ", commit %s", t.Source.Commit)
		}
		fmt.Fprintln(w, ")")
		for _, f := range t.RemovedFields {
			fmt.Fprintf(w, "  removed field %s: %s\n", f.Field, f.Reason)
		}
		for _, f := range t.TranslatedFields {
			fmt.Fprintf(w, "  translated %s -> %s: %s\n", f.Field, f.To, f.Reason)
		}
		for _, s := range t.RewrittenScripts {
			fmt.Fprintf(w, "  wrapped %s in %s (args %s)\n", s.Original, s.Entrypoint, strings.Join(s.Args, ", "))
		}
		for _, d := range t.DroppedFiles {
			fmt.Fprintf(w, "  dropped %s: %s\n", d.Path, d.Reason)
		}
		for _, s := range t.RemovedSecrets {
			fmt.Fprintf(w, "  removed a %s from %s:%d\n", s.Kind, s.File, s.Line)
		}
		for _, m := range t.ManualReview {
			fmt.Fprintf(w, "  review: %s %s\n", m.File, m.Message)
		}
	}
	if v == nil {
		return
	}
	verdict := "passed"
	if !v.Passed {
		verdict = "FAILED"
	}
	fmt.Fprintf(w, "validation of %s %s\n", v.Skill, verdict)
	for _, f := range v.Findings {
		loc := f.File
		if f.Line > 0 {
			loc = fmt.Sprintf("%s:%d", f.File, f.Line)
		}
		if f.Field != "" {
			loc += " (" + f.Field + ")"
		}
		fmt.Fprintf(w, "  %s %s: %s [%s]\n", f.Severity, strings.TrimSpace(loc), f.Message, f.Rule)
	}
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
