package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/silas-ai/silas/messages"
)

// A gate_approval card (spec 8.1) shows the gate's name, the value it
// checked and the evaluation context, and asks approve or block. Values
// come from a message, a model's answer or a tool call's arguments, so each
// is shown through printable and shortened: the card stays readable, and
// says how much it left out.

// gateQuestion is the gate card's prompt; an empty line blocks.
const gateQuestion = "approve or block? [a/B] "

// Limits of what a gate card shows.
const (
	maxGateValueRunes   = 400 // the value
	maxGateContextRunes = 160 // each context entry
	maxGateContextKeys  = 20
)

func writeGateCard(out io.Writer, g *messages.GateApprovalEvent) {
	fmt.Fprintf(out, "gate approval requested: %s\n", printable(g.GateName))
	fmt.Fprintf(out, "  value: %s\n", shorten(valueText(g.Value), maxGateValueRunes))
	keys := slices.Sorted(maps.Keys(g.Context))
	for i, k := range keys {
		if i == maxGateContextKeys {
			fmt.Fprintf(out, "  (%d more context entries; see them in the web app)\n", len(keys)-i)
			break
		}
		fmt.Fprintf(out, "  %s: %s\n", shorten(k, 40), shorten(valueText(g.Context[k]), maxGateContextRunes))
	}
	fmt.Fprintln(out, "  approve: it goes ahead; block: the gate stops it")
}

// gateAnswer maps a typed line to a gate verdict; ok is false for a line
// that is neither answer.
func gateAnswer(line string) (verdict, said string, ok bool) {
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "a", "approve", "y", "yes":
		return verdictApproved, "approve", true
	case "", "b", "block", "n", "no":
		return verdictDeclined, "block", true
	}
	return "", "", false
}

// valueText renders a gate's value or context entry on one line: a string
// as it is, anything else as JSON.
func valueText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprintf("%v", v)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// shorten makes s printable and cuts it to at most limit runes of the
// original, saying how many it left out.
func shorten(s string, limit int) string {
	n := utf8.RuneCountInString(s)
	if n <= limit {
		return printable(s)
	}
	end, k := 0, 0
	for end = range s {
		if k == limit {
			break
		}
		k++
	}
	return fmt.Sprintf("%s… (%d more characters)", printable(s[:end]), n-limit)
}
