package script

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/gates"
	"github.com/silas-ai/silas/runtime/gates/predicate"
	"github.com/silas-ai/silas/sandbox"
)

// Defaults of [Options].
const (
	DefaultTimeout   = 30 * time.Second
	DefaultMaxOutput = 1 << 20
	// maxEnvValue caps one environment variable's value.
	maxEnvValue = 96 << 10
	// maxValueText caps the script output kept in GateResult.value.
	maxValueText = 1000
	// envPath is the PATH a script sees: the sandbox's.
	envPath = sandbox.DefaultPath
)

// Options configure a [Provider].
type Options struct {
	// Dir is the script directory, owned by the configuration (absolute):
	// the only place scripts are taken from, the scripts' working
	// directory, and the only path the sandbox shows them (read-only).
	// Required.
	Dir string
	// Sandbox runs every script, each in a fresh instance. Required. Give
	// it a root of its own outside Dir (for example
	// <data_dir>/sandbox/gates): a run whose work dir lies inside Dir is
	// refused, since other runs would see it.
	Sandbox sandbox.Manager
	// Timeout bounds one script run. Default 30 s.
	Timeout time.Duration
	// MaxOutput caps the bytes read from stdout and stderr. Default 1 MiB.
	MaxOutput int
	// Predicate evaluates extracted values and file_exists expectations.
	// Default: a predicate provider permitted to look inside Dir only.
	Predicate *predicate.Provider
}

// Provider is the "script" gate provider. It is immutable and safe for
// concurrent use.
type Provider struct {
	o Options
}

var _ gates.Provider = (*Provider)(nil)

// New checks o and fills its defaults.
func New(o Options) (*Provider, error) {
	if !filepath.IsAbs(o.Dir) {
		return nil, fmt.Errorf("%w: script gates need an absolute working directory, got %q", gates.ErrBadConfig, o.Dir)
	}
	o.Dir = filepath.Clean(o.Dir)
	if o.Sandbox == nil {
		return nil, fmt.Errorf("%w: script gates need a sandbox to run their scripts in", gates.ErrBadConfig)
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxOutput <= 0 {
		o.MaxOutput = DefaultMaxOutput
	}
	if o.Predicate == nil {
		p, err := predicate.New(o.Dir)
		if err != nil {
			return nil, err
		}
		o.Predicate = p
	}
	return &Provider{o: o}, nil
}

// Evaluate implements [gates.Provider].
func (p *Provider) Evaluate(ctx context.Context, g *messages.Gate, trigger messages.GateTrigger, gctx map[string]any) (messages.GateResult, error) {
	argv, err := p.argv(g)
	if err != nil {
		return messages.GateResult{}, err
	}
	realDir, err := resolveDir(p.o.Dir)
	if err != nil {
		return messages.GateResult{}, fmt.Errorf("gate %s: %w", g.Name, err)
	}
	if argv[0], err = resolveProgram(p.o.Dir, realDir, argv[0]); err != nil {
		return messages.GateResult{}, fmt.Errorf("gate %s: %w", g.Name, err)
	}
	env, err := Environment(g.Name, trigger, gctx)
	if err != nil {
		return messages.GateResult{}, err
	}
	out, err := p.run(ctx, realDir, argv, env)
	if out.TimedOut || (err != nil && ctx.Err() != nil) {
		terr := fmt.Errorf("%w after %s (process group killed)", ErrTimeout, p.o.Timeout)
		if cause := errors.Join(err, ctx.Err()); cause != nil {
			terr = fmt.Errorf("%w: %w", terr, cause)
		}
		return messages.GateResult{}, terr
	}
	if err != nil {
		return messages.GateResult{}, fmt.Errorf("script gate %s: %w", g.Name, err)
	}
	parsed := ParseOutput(out.Stdout)
	res, err := p.decide(g, out.ExitCode, parsed)
	if err != nil {
		return messages.GateResult{}, err
	}
	if parsed.ModifiedContext != nil {
		res.ModifiedContext = parsed.ModifiedContext
	}
	res.GateName, res.Lane = g.Name, messages.LanePolicy
	return res, nil
}

// argv is the command of a gate: config "argv" (a list), else
// check_command, else check, split by [SplitCommand]. Its program is
// resolved by resolveProgram when the gate runs.
func (p *Provider) argv(g *messages.Gate) ([]string, error) {
	var argv []string
	if raw, ok := g.Config["argv"]; ok {
		list, ok := raw.([]any)
		if !ok || len(list) == 0 {
			return nil, fmt.Errorf("%w: config.argv must be a non-empty list of strings", gates.ErrBadConfig)
		}
		for _, a := range list {
			s, ok := a.(string)
			if !ok {
				return nil, fmt.Errorf("%w: config.argv must be a non-empty list of strings", gates.ErrBadConfig)
			}
			argv = append(argv, s)
		}
	} else {
		cmd := ""
		switch {
		case g.CheckCommand != nil && strings.TrimSpace(*g.CheckCommand) != "":
			cmd = *g.CheckCommand
		case g.Check != nil:
			cmd = *g.Check
		}
		var err error
		if argv, err = SplitCommand(cmd); err != nil {
			return nil, fmt.Errorf("gate %s: %w", g.Name, err)
		}
	}
	return argv, nil
}

// Environment builds the complete environment of a gate script (see the
// package documentation). It never puts a context value anywhere but in a
// variable's value.
func Environment(gate string, trigger messages.GateTrigger, gctx map[string]any) ([]string, error) {
	env := []string{"PATH=" + envPath, "LANG=C.UTF-8"}
	add := func(name, v string) error {
		v = strings.ReplaceAll(v, "\x00", "\uFFFD")
		if len(v) > maxEnvValue {
			return fmt.Errorf("%w: %s is %d bytes, the limit is %d", ErrContextTooLarge, name, len(v), maxEnvValue)
		}
		env = append(env, name+"="+v)
		return nil
	}
	ctxJSON, err := json.Marshal(gctx)
	if err != nil {
		return nil, fmt.Errorf("script: encode gate context: %w", err)
	}
	errs := []error{
		add("SILAS_GATE_NAME", gate),
		add("SILAS_GATE_TRIGGER", string(trigger)),
		add("SILAS_GATE_VALUE", text(gctx[gates.TargetKey(trigger)])),
		add("SILAS_GATE_CONTEXT_JSON", string(ctxJSON)),
	}
	seen := map[string]bool{}
	for _, k := range slices.Sorted(maps.Keys(gctx)) {
		name := "SILAS_CTX_" + envName(k)
		if seen[name] {
			continue
		}
		seen[name] = true
		errs = append(errs, add(name, text(gctx[k])))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return env, nil
}

// text renders a context value for the environment: strings and numbers as
// text, objects and lists as JSON.
func text(v any) string {
	switch v.(type) {
	case map[string]any, []any:
		b, err := json.Marshal(v)
		if err == nil {
			return string(b)
		}
	}
	return gates.AsText(v)
}

// envName upper-cases a key and replaces what a variable name cannot hold.
func envName(k string) string {
	b := []byte(strings.ToUpper(k))
	for i, c := range b {
		if (c < 'A' || c > 'Z') && (c < '0' || c > '9') {
			b[i] = '_'
		}
	}
	return string(b)
}

// Parsed is a script's standard output as the provider reads it.
type Parsed struct {
	// Text is the output without the modified_context line.
	Text string
	// Values are the "key: value" lines; the last line for a key wins.
	Values map[string]string
	// ModifiedContext is the rewrite from the reserved last line.
	ModifiedContext map[string]any
}

// ParseOutput reads a script's stdout (see the package documentation).
func ParseOutput(stdout []byte) Parsed {
	p := Parsed{Values: map[string]string{}}
	lines := strings.Split(strings.ReplaceAll(string(stdout), "\r\n", "\n"), "\n")
	last := -1
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.TrimSpace(lines[i]) != "" {
			last = i
			break
		}
	}
	if last >= 0 {
		if mc, ok := modifiedContextLine(lines[last]); ok {
			p.ModifiedContext = mc
			lines = append(lines[:last:last], lines[last+1:]...)
		}
	}
	for _, l := range lines {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) != "" {
			p.Values[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	p.Text = strings.Join(lines, "\n")
	return p
}

// modifiedContextLine decodes {"modified_context": {...}}, nothing else.
func modifiedContextLine(line string) (map[string]any, bool) {
	line = strings.TrimSpace(line)
	if !strings.HasPrefix(line, "{") {
		return nil, false
	}
	var doc map[string]json.RawMessage
	dec := json.NewDecoder(strings.NewReader(line))
	if err := dec.Decode(&doc); err != nil || len(doc) != 1 || dec.More() {
		return nil, false
	}
	raw, ok := doc["modified_context"]
	if !ok {
		return nil, false
	}
	var mc map[string]any
	if err := json.Unmarshal(raw, &mc); err != nil || mc == nil {
		return nil, false
	}
	return mc, true
}

// decide applies check_expect, else extract, else the exit status.
func (p *Provider) decide(g *messages.Gate, exit int, out Parsed) (messages.GateResult, error) {
	res := messages.GateResult{GateName: g.Name, Lane: messages.LanePolicy, Value: clipText(strings.TrimSpace(out.Text))}
	switch {
	case g.CheckExpect != nil:
		ok, why, err := p.expect(g, g.CheckExpect, exit, out.Text)
		if err != nil {
			return messages.GateResult{}, err
		}
		res.Action, res.Reason = messages.GateBlock, "expectation not met: "+why
		if ok {
			res.Action, res.Reason = messages.GateContinue, "expectation met: "+why
		}
		return res, nil
	case g.Extract != nil && strings.TrimSpace(*g.Extract) != "":
		key := strings.TrimSpace(*g.Extract)
		v, found := out.Values[key]
		if !found {
			res.Action, res.Reason = messages.GateBlock, fmt.Sprintf("script output has no %q", key)
			return res, nil
		}
		r, err := p.o.Predicate.Check(g, gates.Extracted{Value: v, Found: true, Key: key})
		if err != nil {
			return messages.GateResult{}, fmt.Errorf("gate %s: %w", g.Name, err)
		}
		return r, nil
	case exit == 0:
		res.Action, res.Reason = messages.GateContinue, "script exited with status 0"
	default:
		res.Action, res.Reason = messages.GateBlock, fmt.Sprintf("script exited with status %d", exit)
	}
	return res, nil
}

// expect evaluates an Expectation as the verification runner does (spec
// 5.3 step 3) against the exit status and the output.
func (p *Provider) expect(g *messages.Gate, e *messages.Expectation, exit int, output string) (bool, string, error) {
	trimmed := strings.TrimSpace(output)
	switch {
	case e.ExitCode != nil:
		return exit == *e.ExitCode, fmt.Sprintf("exit status %d, expected %d", exit, *e.ExitCode), nil
	case e.Equals != nil:
		return trimmed == strings.TrimSpace(*e.Equals), "output equals the expected text", nil
	case e.Contains != nil:
		return strings.Contains(output, *e.Contains), "output contains the expected text", nil
	case e.Regex != nil:
		re, err := regexp.Compile(*e.Regex)
		if err != nil {
			return false, "", fmt.Errorf("%w: check_expect.regex: %w", gates.ErrBadConfig, err)
		}
		return re.MatchString(output), "output matches the expected pattern", nil
	case e.OutputLT != nil, e.OutputGT != nil:
		f, err := strconv.ParseFloat(trimmed, 64)
		if err != nil {
			return false, "output is not a number", nil
		}
		if e.OutputLT != nil {
			return f < *e.OutputLT, fmt.Sprintf("output %v < %v", f, *e.OutputLT), nil
		}
		return f > *e.OutputGT, fmt.Sprintf("output %v > %v", f, *e.OutputGT), nil
	case e.FileExists != nil:
		fg := messages.Gate{Name: g.Name, Type: messages.GateFileValid}
		r, err := p.o.Predicate.Check(&fg, gates.Extracted{Value: *e.FileExists, Found: true, Key: "file_exists"})
		if err != nil {
			return false, "", err
		}
		return r.Action == messages.GateContinue, r.Reason, nil
	case e.NotEmpty != nil && *e.NotEmpty:
		return trimmed != "", "output is not empty", nil
	}
	return true, "No expectation", nil
}

// clipText keeps at most 1000 bytes of s, dropping a cut rune.
func clipText(s string) string {
	if len(s) <= maxValueText {
		return s
	}
	return strings.ToValidUTF8(s[:maxValueText], "")
}
