package contextmgr

import (
	"strconv"
	"strings"

	"github.com/silas-ai/silas/messages"
)

// Tool result statuses carried in a tool result's Source (see ToolSource).
const (
	StatusSucceeded = "SUCCEEDED"
	StatusFailed    = "FAILED"
)

// ToolSource is the Source of a tool_result item: "tool:<STATUS>:<call>",
// where call names the tool and its salient argument as the model will see
// it, e.g. `shell_exec("npm test")`. Observation masking builds its
// placeholder from it, so it survives chronicle persistence and
// rehydration.
func ToolSource(call string, failed bool) string {
	status := StatusSucceeded
	if failed {
		status = StatusFailed
	}
	return "tool:" + status + ":" + call
}

// parseToolSource splits a ToolSource; a source in another form yields the
// text after "tool:" (or the whole source) as the call and no status.
func parseToolSource(source string) (call, status string) {
	rest, ok := strings.CutPrefix(source, "tool:")
	if !ok {
		return source, ""
	}
	if st, call, ok := strings.Cut(rest, ":"); ok && (st == StatusSucceeded || st == StatusFailed) {
		return call, st
	}
	return rest, ""
}

// MaskPlaceholder is the content that replaces a tool result under
// observation masking (spec 5.7; the call rendered as in the example of
// 3.5):
//
//	[Result of shell_exec("npm test") (FAILED) — 847 tokens — see memory for details]
//
// tokens is the size of the original result.
func MaskPlaceholder(source string, tokens int) string {
	call, status := parseToolSource(source)
	if call == "" {
		call = "tool"
	}
	var b strings.Builder
	b.Grow(len(call) + 64)
	b.WriteString("[Result of ")
	b.WriteString(call)
	if status != "" {
		b.WriteString(" (")
		b.WriteString(status)
		b.WriteByte(')')
	}
	b.WriteString(" — ")
	b.WriteString(strconv.Itoa(tokens))
	b.WriteString(" tokens — see memory for details]")
	return b.String()
}

// maskObservations is tier-1 step 1: chronicle tool results older than
// observation_mask_after_turns turns get the placeholder. The originals go
// to res.Masked for the caller to store.
func (w *Window) maskObservations(turn int, res *EvictionResult) {
	if w.state[chronicleZone].maskable == 0 {
		return // the common turn: no tool result waits to be masked
	}
	cutoff := turn - w.limits.ObservationMaskAfterTurns
	items := w.zones[chronicleZone]
	first := -1
	for i := range items {
		it := &items[i]
		if !maskable(it) || it.TurnNumber >= cutoff {
			continue
		}
		res.Masked = append(res.Masked, *it)
		w.noteRemoved(chronicleZone, it)
		it.Content = MaskPlaceholder(it.Source, it.TokenCount)
		it.TokenCount = EstimateTokens(it.Content)
		it.Masked = true
		w.noteAdded(chronicleZone, it)
		if first < 0 {
			first = i
		}
	}
	if first >= 0 {
		w.changedFrom(chronicleZone, first)
	}
}

// messageBody strips the chronicle prefixes of spec 5.1 steps 3 and 11:
// "[taint] sender: " and "Silas: ".
func messageBody(content string) string {
	s := strings.TrimSpace(content)
	if rest, ok := strings.CutPrefix(s, "Silas:"); ok {
		return strings.TrimSpace(rest)
	}
	if strings.HasPrefix(s, "[") {
		if end := strings.IndexByte(s, ']'); end > 0 {
			if _, body, ok := strings.Cut(s[end+1:], ":"); ok {
				return strings.TrimSpace(body)
			}
		}
	}
	return s
}

// IsTrivial reports whether it is a trivial acknowledgment that the
// heuristic tier drops (spec 5.7): a chronicle message, not pinned, under
// TrivialMaxTokens tokens, whose body matches the window's trivial pattern
// (DefaultTrivialPattern unless Limits.TrivialPattern is set).
func (w *Window) IsTrivial(it *messages.ContextItem) bool {
	if it.Kind != messages.KindMessage || it.Pinned || it.TokenCount >= TrivialMaxTokens {
		return false
	}
	return w.trivial.MatchString(messageBody(it.Content))
}

// dropTrivial is tier-1 step 2. Messages of the current turn stay: the user
// may just have said "ok" and the proxy must see it.
func (w *Window) dropTrivial(turn int, res *EvictionResult) {
	if w.state[chronicleZone].trivial == 0 {
		return // the common turn: nothing to drop
	}
	dropped := w.removeWhere(chronicleZone, func(it *messages.ContextItem) bool {
		return it.TurnNumber < turn && w.IsTrivial(it)
	})
	res.Dropped = append(res.Dropped, dropped...)
}
