package contextmgr

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/silas-ai/silas/messages"
)

// renderOrder is the order of spec 5.7 render step 3 after the system zone:
// recent conversation first, then long-term recall, then the active
// workspace last (recency benefit).
var renderOrder = [...]messages.ContextZone{messages.ZoneChronicle, messages.ZoneMemory, messages.ZoneWorkspace}

// System renders the system zone as plain text, one item a line.
func (w *Window) System() string {
	items := w.zones[0]
	n := 0
	for i := range items {
		n += len(items[i].Content) + 1
	}
	var b strings.Builder
	b.Grow(n)
	for i := range items {
		b.WriteString(items[i].Content)
		b.WriteByte('\n')
	}
	return b.String()
}

// blockOverhead is a generous size of one block's delimiters, used to size
// render buffers.
const blockOverhead = 80

// Render writes every non-system item, and every materialized active
// subscription, as a metadata-tagged block of spec 3.5, zone by zone in the
// order of spec 5.7 (chronicle, memory, workspace); a zone's subscriptions
// follow its items. Masking is EnforceBudget's job: Render shows the window
// as it is. Lines inside content shaped like a delimiter ("--- x ---") are
// prefixed with a backslash so that content cannot forge a block boundary.
//
// Each zone's blocks are rendered once and kept (zonestate.go): a turn
// renders only what was added since the last call, and the text of an
// unchanged zone is reused without a copy.
func (w *Window) Render() string {
	return w.render()
}

// RenderEncoded returns what Render would, encoded as a JSON string,
// quotes included, byte for byte what encoding/json makes of it, in pieces
// to be written one after the other, and the length of the text they
// encode. The blocks are kept encoded between turns like the text, so a
// model client that sends the pieces as they are (llm.Message Quoted)
// encodes only what is new. The text itself is not joined: at a full
// window it is hundreds of kilobytes a call that nothing reads.
func (w *Window) RenderEncoded() (quoted []string, size int) {
	parts, n, _ := w.renderParts()
	return w.quote(&parts), n
}

func (w *Window) render() string {
	parts, n, last := w.renderParts()
	switch {
	case last < 0:
		return ""
	case len(parts[last]) == n:
		return parts[last] // one part: no copy
	}
	var b strings.Builder
	b.Grow(n)
	for _, p := range parts {
		b.WriteString(p)
	}
	return b.String()
}

// renderParts renders each zone's blocks and subscriptions, notes the
// render for the prefix statistics, and returns the parts, their total
// length and the index of the last non-empty one (-1: none).
func (w *Window) renderParts() (parts [2 * len(renderOrder)]string, n, last int) {
	last = -1
	for k, z := range renderOrder {
		parts[2*k] = w.renderedZone(zoneIndex(z))
		parts[2*k+1] = w.renderedSubscriptions(z)
	}
	for i, p := range parts {
		if p != "" {
			n += len(p)
			last = i
		}
	}
	w.noteRender(&parts, n)
	return parts, n, last
}

// quote returns the JSON encoding of a render in pieces: the zones'
// encoded blocks, and the subscriptions, encoded anew (they are small and
// change).
func (w *Window) quote(parts *[2 * len(renderOrder)]string) []string {
	out := make([]string, 0, 2+len(parts))
	out = append(out, `"`)
	for k, z := range renderOrder {
		if e := w.quotedZone(zoneIndex(z)); e != "" {
			out = append(out, e)
		}
		if s := parts[2*k+1]; s != "" {
			var b strings.Builder
			appendQuoted(&b, s)
			out = append(out, b.String())
		}
	}
	return append(out, `"`)
}

// renderedSubscriptions renders zone's materialized active subscriptions.
func (w *Window) renderedSubscriptions(z messages.ContextZone) string {
	var b strings.Builder
	for _, s := range w.subs {
		if s.Active && s.Zone == z && s.matTurn >= 0 {
			writeSubscription(&b, s)
		}
	}
	return b.String()
}

// writeBlock writes one item with its delimiter (spec 3.5):
//
//	--- memory | 2026-01-15 | [external] | "auth module bug fix pattern" ---
//	--- turn 14 | user | live ---
//	--- tool_result | turn 12 | masked ---
//
// A memory's label is the start of its first line (MemoryLabelBytes); its
// taint is shown so that the model can tell memories derived from external
// content from the owner's. Label-shaped lines of content are escaped
// (label.go).
func writeBlock(b *strings.Builder, it *messages.ContextItem) {
	var scratch [128]byte
	b.Write(appendHeader(scratch[:0], it))
	writeItemContent(b, it)
	b.WriteString(blockEnd)
}

// blockEnd closes every block.
const blockEnd = "--- end ---\n\n"

// appendHeader appends the header line of it's block to dst.
func appendHeader(dst []byte, it *messages.ContextItem) []byte {
	switch it.Kind {
	case messages.KindMemory:
		dst = append(dst, "--- memory | "...)
		dst = it.CreatedAt.UTC().AppendFormat(dst, "2006-01-02")
		dst = append(dst, " | ["...)
		dst = append(dst, renderedTaint(it.Taint)...)
		dst = append(dst, "] | \""...)
		dst = append(dst, memoryLabel(it.Content)...)
		return append(dst, "\" ---\n"...)
	case messages.KindMessage:
		dst = append(dst, "--- turn "...)
		dst = strconv.AppendInt(dst, int64(it.TurnNumber), 10)
		dst = append(dst, " | "...)
		dst = append(dst, speaker(it.Source)...)
		dst = append(dst, " | "...)
		dst = append(dst, state(it.Masked)...)
		return append(dst, " ---\n"...)
	default:
		dst = append(dst, "--- "...)
		dst = append(dst, it.Kind...)
		dst = append(dst, " | turn "...)
		dst = strconv.AppendInt(dst, int64(it.TurnNumber), 10)
		dst = append(dst, " | "...)
		dst = append(dst, state(it.Masked)...)
		return append(dst, " ---\n"...)
	}
}

// cost is what it counts against its zone: its content and its block's
// delimiters.
func cost(it *messages.ContextItem) int { return it.TokenCount + delimiterTokens(it) }

// delimiterTokens is what it's block costs in the rendered prompt beyond
// its content: the header line and the end line (spec 3.5 blocks). Items
// of the system zone render as plain lines and cost nothing more. Zone
// totals count it, so that the budget limits what the model is sent, not
// just the contents.
func delimiterTokens(it *messages.ContextItem) int {
	if it.Zone == messages.ZoneSystem {
		return 0
	}
	var scratch [128]byte
	return estimate(appendHeader(scratch[:0], it)) + estimate(blockEnd)
}

// writeSubscription writes a materialized subscription (spec 3.5):
//
//	--- subscription:file | auth.py:10-45 | live | last_changed: turn 8 ---
//
// file and file_lines both render as subscription:file (the target shows
// the range); a stale file_lines block replaces "live" with
// "[stale — file changed since turn N]", N the turn its hash was taken.
func writeSubscription(b *strings.Builder, s *Subscription) {
	var scratch [24]byte
	b.WriteString("--- subscription:")
	if s.Type == SubMemoryQuery {
		b.WriteString(SubMemoryQuery)
		b.WriteString(" | ")
		b.WriteString(strconv.Quote(s.Target))
	} else {
		b.WriteString(SubFile)
		b.WriteString(" | ")
		b.WriteString(s.Target)
	}
	b.WriteString(" | ")
	if s.Stale {
		b.WriteString("[stale — file changed since turn ")
		b.Write(strconv.AppendInt(scratch[:0], int64(s.HashTurn), 10))
		b.WriteString("]")
	} else {
		b.WriteString("live")
	}
	b.WriteString(" | last_changed: turn ")
	b.Write(strconv.AppendInt(scratch[:0], int64(s.LastChanged), 10))
	b.WriteString(" ---\n")
	writeContent(b, s.Content)
	b.WriteString("--- end ---\n\n")
}

// writeContent writes content and a final newline, escaping delimiter- and
// label-shaped lines (label.go).
func writeContent(b *strings.Builder, content string) {
	writeEscaped(b, content, false)
}

func state(masked bool) string {
	if masked {
		return "masked"
	}
	return "live"
}

func speaker(source string) string {
	if strings.HasPrefix(source, "agent:") {
		return "silas"
	}
	return "user"
}

// MemoryLabelBytes caps the quoted label of a memory block.
const MemoryLabelBytes = 60

// memoryLabel is the start of content's first line, cut at a word boundary
// within MemoryLabelBytes, with double quotes turned into single ones.
func memoryLabel(content string) string {
	line := firstLine(strings.TrimSpace(content))
	if len(line) > MemoryLabelBytes {
		cut := strings.LastIndexByte(line[:MemoryLabelBytes], ' ')
		if cut < MemoryLabelBytes/2 {
			cut = MemoryLabelBytes
			for cut > 0 && !runeStart(line[cut]) {
				cut--
			}
		}
		line = line[:cut] + "…"
	}
	if strings.IndexByte(line, '"') >= 0 {
		line = strings.ReplaceAll(line, `"`, "'")
	}
	return line
}

// SkillMeta is the routing metadata of one unactivated skill (spec 5.1 step
// 6.5: name and description).
type SkillMeta struct {
	Name        string
	Description string
	// Priority orders the entries: higher first; ties by name.
	Priority int
}

// SkillMetadata renders the proxy's skill metadata, one "- name:
// description" line each, within skill_metadata_budget_pct of Budget.Total
// (spec 3.5, 5.1 step 6.5). Entries are taken in priority order (higher
// first, then by name); at the first entry that does not fit, it and every
// lower-priority entry are dropped, so the cut is deterministic. It returns
// the block and the names dropped, in order.
func (w *Window) SkillMetadata(skills []SkillMeta) (block string, dropped []string) {
	sorted := slices.Clone(skills)
	slices.SortStableFunc(sorted, func(a, b SkillMeta) int {
		if c := cmp.Compare(b.Priority, a.Priority); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
	limit := int(float64(w.budget.Total) * w.limits.SkillMetadataBudgetPct)
	used := 0
	var b strings.Builder
	for i, s := range sorted {
		line := "- " + s.Name + ": " + s.Description + "\n"
		if used += EstimateTokens(line); used > limit {
			for _, d := range sorted[i:] {
				dropped = append(dropped, d.Name)
			}
			break
		}
		b.WriteString(line)
	}
	return b.String(), dropped
}
