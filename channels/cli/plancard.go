package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/silas-ai/silas/messages"
)

// writePlanCard prints every non-empty field of a plan's card: what the
// approval token signs. Empty fields are left out; a project's tasks follow,
// each with its own fields. Every string goes through printable, so that
// text the model wrote cannot move the cursor or recolour the terminal to
// hide a line of the card.
func writePlanCard(out io.Writer, c *messages.PlanCard, indent string) {
	line := func(label, value string) {
		if value != "" {
			fmt.Fprintf(out, "%s%s: %s\n", indent, label, printable(value))
		}
	}
	list := func(label string, items []string) {
		if len(items) == 0 {
			return
		}
		fmt.Fprintf(out, "%s%s:\n", indent, label)
		for _, it := range items {
			fmt.Fprintf(out, "%s  - %s\n", indent, printable(it))
		}
	}
	hash := c.PlanHash
	if len(hash) > 16 {
		hash = hash[:16]
	}
	fmt.Fprintf(out, "%splan %s (%s), plan hash %s\n", indent, printable(c.ID), printable(string(c.Type)), hash)
	line("title", c.Title)
	line("agent", string(c.Agent))
	line("interaction mode", string(c.InteractionMode))
	line("budget", budgetText(c.Budget))
	line("parent", deref(c.Parent))
	line("spawned by", deref(c.SpawnedBy))
	line("follow-up of", deref(c.FollowUpOf))
	line("domain", deref(c.Domain))
	line("input artifacts from", strings.Join(c.InputArtifactsFrom, ", "))
	line("skills", strings.Join(c.Skills, ", "))
	list("skill hashes", keyed(c.SkillHashes))
	checks := make([]string, 0, len(c.Verify))
	for _, v := range c.Verify {
		checks = append(checks, checkText(v))
	}
	list("verify", checks)
	gates := make([]string, 0, len(c.Gates))
	for _, g := range c.Gates {
		gates = append(gates, g.Name+": "+compact(g, "name"))
	}
	list("gates", gates)
	list("access levels", keyed(c.AccessLevels))
	list("escalation", keyed(c.Escalation))
	line("schedule", deref(c.Schedule))
	line("on failure", c.OnFailure)
	line("on stuck", c.OnStuck)
	line("failure context", deref(c.FailureContext))
	line("tasks", strings.Join(c.Tasks, ", "))
	line("depends on", strings.Join(c.DependsOn, ", "))
	line("outputs", strings.Join(c.Outputs, ", "))
	if strings.TrimSpace(c.Body) != "" {
		fmt.Fprintf(out, "%sbriefing:\n", indent)
		for _, l := range strings.Split(c.Body, "\n") {
			fmt.Fprintf(out, "%s  | %s\n", indent, printable(l))
		}
	}
	for i := range c.TaskPlans {
		fmt.Fprintf(out, "%stask %d of %d:\n", indent, i+1, len(c.TaskPlans))
		writePlanCard(out, &c.TaskPlans[i], indent+"    ")
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// budgetText spells out every limit of b.
func budgetText(b messages.Budget) string {
	return fmt.Sprintf("%d tokens, $%s, %d s wall time, %d attempts, %d planner calls",
		b.MaxTokens, strconv.FormatFloat(b.MaxCostUSD, 'f', -1, 64), b.MaxWallTimeSeconds, b.MaxAttempts, b.MaxPlannerCalls)
}

// checkText is one verification check: its command, what it expects, its
// timeout and whether its sandbox has network access.
func checkText(v messages.VerificationCheck) string {
	network := "no network access"
	if v.Network {
		network = "network access"
	}
	return fmt.Sprintf("%s: `%s` expect %s, timeout %d s, %s", v.Name, v.Run, compact(v.Expect), v.Timeout, network)
}

// keyed renders a map of named objects as "name: {fields}", sorted by name.
func keyed[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, k+": "+compact(m[k]))
	}
	return out
}

// compact renders v as JSON without its null, false and empty members (and
// without the keys in drop), so that a struct shows every field that is set
// and grows with it.
func compact(v any, drop ...string) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%+v", v)
	}
	var tree any
	if err := json.Unmarshal(b, &tree); err != nil {
		return string(b)
	}
	if m, ok := tree.(map[string]any); ok {
		for _, k := range drop {
			delete(m, k)
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // show "<" as typed, not as \u003c
	if err := enc.Encode(prune(tree)); err != nil {
		return string(b)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// prune drops null, false, "" and empty members of objects, recursively.
func prune(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = prune(e)
			switch e := x[k].(type) {
			case nil:
				delete(x, k)
			case bool:
				if !e {
					delete(x, k)
				}
			case string:
				if e == "" {
					delete(x, k)
				}
			case []any:
				if len(e) == 0 {
					delete(x, k)
				}
			case map[string]any:
				if len(e) == 0 {
					delete(x, k)
				}
			}
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = prune(e)
		}
	}
	return v
}

// printable replaces the control characters of s (but tab) and the Unicode
// bidirectional controls with visible \u escapes: a terminal would act on
// them, and a model could use them to hide or reorder part of the card.
func printable(s string) string {
	if !strings.ContainsFunc(s, hidden) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if hidden(r) {
			fmt.Fprintf(&b, "\\u%04x", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func hidden(r rune) bool {
	return (unicode.IsControl(r) && r != '\t') || unicode.Is(unicode.Bidi_Control, r) || r == '\u2028' || r == '\u2029'
}
