package contextmgr

import (
	"encoding/json"
	"strings"

	"github.com/silas-ai/silas/messages"
)

// zoneState is what a window keeps about one zone besides its items, so
// that a turn costs what changed rather than what the zone holds: the
// zone's token total, the counts that let the heuristic tier skip its
// scans, and the zone's rendered blocks.
//
// Adding, removing or changing an item adjusts the totals by that item
// alone (noteAdded, noteRemoved). A removal (eviction, a dropped
// acknowledgment) drops the removed items' blocks and keeps the others'
// as they are (removedAt); a change in place (a replacement, masking)
// keeps the blocks before the first changed item (changedFrom). So a turn
// renders and encodes only its new blocks, and eviction, which leaves room
// in batches (evictionSlackPct), costs one copy of the kept blocks per
// batch.
type zoneState struct {
	tokens int // the items' cost (content and delimiters), summed
	// maskable counts chronicle tool results maskObservations may mask;
	// trivial counts chronicle messages dropTrivial may drop.
	maskable, trivial int
	// text holds the rendered blocks of the zone's first len(text.ends)
	// items, and quoted the same blocks encoded as the inside of a JSON
	// string (RenderEncoded), each block encoded once.
	text, quoted blocks
	// shown is the length of text at the last Render, and intact how much
	// of those bytes no change has touched since (RenderStats).
	shown, intact int
	// sources counts the memory zone's items by Source ("memory:<id>"),
	// so that retrieval skips what the zone holds without a pass over it.
	sources map[string]int
}

// blocks is rendered text that only grows at its end, block by block.
// A strings.Builder only ever appends to its buffer, so a string taken
// from it stays valid and unchanged while it grows: Render hands out the
// blocks without copying them, and dropping blocks starts a new builder
// rather than rewriting the old one. Keeping blocks is sound because
// writeBlock depends on its item alone: a rendering that read anything
// else (the turn, the zone, a setting) would have to drop the kept blocks
// when that changes.
type blocks struct {
	b *strings.Builder
	// ends[i] is the end of block i in b.
	ends []int
}

func (t *blocks) String() string {
	if t.b == nil {
		return ""
	}
	return t.b.String()
}

// reserve makes room for n more bytes. A new builder is a quarter larger
// than needed: a zone that gains a block a turn copies its text rarely,
// and holds at most a quarter more than it uses (a Builder left to grow by
// itself doubles).
func (t *blocks) reserve(n int) {
	if t.b != nil && t.b.Cap()-t.b.Len() >= n {
		return
	}
	old := t.String()
	t.b = new(strings.Builder)
	t.b.Grow(len(old) + n + (len(old)+n)/4)
	t.b.WriteString(old)
}

// endBlock marks the end of the block just written.
func (t *blocks) endBlock() { t.ends = append(t.ends, t.b.Len()) }

// keep drops every block from index n on.
func (t *blocks) keep(n int) {
	if n >= len(t.ends) {
		return
	}
	old := t.String()
	t.b, t.ends = nil, t.ends[:n]
	if n > 0 {
		kept := old[:t.ends[n-1]]
		t.reserve(len(kept))
		t.b.WriteString(kept)
	}
}

// drop removes the blocks at the ascending indexes removed, copying the
// others as they are: a block's text depends on its item alone, not on
// where it stands, so eviction costs a copy rather than a new render.
func (t *blocks) drop(removed []int) {
	if len(removed) == 0 || removed[0] >= len(t.ends) {
		return
	}
	old, ends := t.String(), t.ends
	size, gone := len(old), 0
	for _, i := range removed {
		if i < len(ends) { // later items have no block yet
			size -= ends[i] - blockStart(ends, i)
			gone++
		}
	}
	t.b, t.ends = nil, make([]int, 0, len(ends)-gone)
	t.reserve(size)
	next := 0 // index into removed
	for i := range ends {
		if next < len(removed) && removed[next] == i {
			next++
			continue
		}
		t.b.WriteString(old[blockStart(ends, i):ends[i]])
		t.endBlock()
	}
}

// blockStart is where block i starts.
func blockStart(ends []int, i int) int {
	if i == 0 {
		return 0
	}
	return ends[i-1]
}

// Zone indexes (see zoneIndex).
const (
	chronicleZone = 1
	memoryZone    = 2
)

// maskable reports whether observation masking may one day mask it.
func maskable(it *messages.ContextItem) bool {
	return it.Kind == messages.KindToolResult && !it.Masked && !it.Pinned
}

// noteAdded accounts for it, just added to zone zi.
func (w *Window) noteAdded(zi int, it *messages.ContextItem) { w.count(zi, it, 1) }

// noteRemoved takes it, just removed from zone zi (or about to be changed
// in place), out of the zone's totals.
func (w *Window) noteRemoved(zi int, it *messages.ContextItem) { w.count(zi, it, -1) }

func (w *Window) count(zi int, it *messages.ContextItem, sign int) {
	z := &w.state[zi]
	z.tokens += sign * cost(it)
	if zi == memoryZone {
		if z.sources == nil {
			z.sources = make(map[string]int)
		}
		if z.sources[it.Source] += sign; z.sources[it.Source] <= 0 {
			delete(z.sources, it.Source)
		}
	}
	if zi == chronicleZone {
		if maskable(it) {
			z.maskable += sign
		}
		if w.IsTrivial(it) {
			z.trivial += sign
		}
	}
}

// recount recomputes the totals of zone zi in one pass (after the trivial
// pattern changed).
func (w *Window) recount(zi int) {
	z := &w.state[zi]
	z.tokens, z.maskable, z.trivial, z.sources = 0, 0, 0, nil
	for i := range w.zones[zi] {
		w.noteAdded(zi, &w.zones[zi][i])
	}
}

// changedFrom drops the rendered blocks of zone zi from index first on,
// after a change other than an append (a replacement, a removal, masking)
// whose first changed item was at first; the blocks before it are kept.
// The caller keeps the totals with noteAdded and noteRemoved.
func (w *Window) changedFrom(zi, first int) {
	z := &w.state[zi]
	keep := max(first, 0)
	if keep >= len(z.text.ends) {
		return // nothing rendered was touched
	}
	z.text.keep(keep)
	z.quoted.keep(keep)
	z.intact = min(z.intact, len(z.text.String()))
}

// removedAt drops the rendered blocks of the items of zone zi that were at
// the ascending indexes removed, keeping the others' blocks.
func (w *Window) removedAt(zi int, removed []int) {
	z := &w.state[zi]
	if len(removed) == 0 || removed[0] >= len(z.text.ends) {
		return // nothing rendered was removed
	}
	z.intact = min(z.intact, blockStart(z.text.ends, removed[0]))
	z.text.drop(removed)
	z.quoted.drop(removed)
}

// renderedZone brings the rendered blocks of zone zi up to date, rendering
// only the items appended or changed since the last call, and returns them.
func (w *Window) renderedZone(zi int) string {
	z := &w.state[zi]
	items := w.zones[zi]
	from := len(z.text.ends)
	if from == len(items) {
		return z.text.String()
	}
	n := 0
	for i := from; i < len(items); i++ {
		n += len(items[i].Content) + len(items[i].Source) + blockOverhead
	}
	z.text.reserve(n)
	for i := from; i < len(items); i++ {
		writeBlock(z.text.b, &items[i])
		z.text.endBlock()
	}
	return z.text.String()
}

// quotedZone returns the rendered blocks of zone zi encoded as the inside
// of a JSON string, encoding only blocks not encoded before. Call it after
// renderedZone.
func (w *Window) quotedZone(zi int) string {
	z := &w.state[zi]
	from := len(z.quoted.ends)
	if from == len(z.text.ends) {
		return z.quoted.String()
	}
	text := z.text.String()
	start := 0
	if from > 0 {
		start = z.text.ends[from-1]
	}
	// JSON escapes a byte at most six times over (\u00XX); most text
	// grows by a few percent (newlines, quotes).
	z.quoted.reserve((len(text) - start) * 9 / 8)
	for i := from; i < len(z.text.ends); i++ {
		appendQuoted(z.quoted.b, text[start:z.text.ends[i]])
		z.quoted.endBlock()
		start = z.text.ends[i]
	}
	return z.quoted.String()
}

// appendQuoted writes s as the inside of a JSON string, escaped exactly as
// encoding/json escapes it, so that a prompt assembled from blocks encodes
// to the same bytes as the prompt encoded whole. Every block ends with an
// ASCII line break, so no rune spans two blocks.
func appendQuoted(b *strings.Builder, s string) {
	q, _ := json.Marshal(s) // a string always encodes
	b.Write(q[1 : len(q)-1])
}

// HoldsMemory reports whether the memory zone holds an item whose Source is
// source ("memory:<memory_id>"), without a pass over the zone.
func (w *Window) HoldsMemory(source string) bool {
	return w.state[memoryZone].sources[source] > 0
}
