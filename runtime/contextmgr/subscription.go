package contextmgr

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"time"

	"github.com/silas-ai/silas/messages"
)

// Subscription types (spec 3.5 ContextSubscription.sub_type).
const (
	SubFile        = "file"
	SubFileLines   = "file_lines"
	SubMemoryQuery = "memory_query"
)

// Subscription is a reference to a live resource, materialized into the
// context on each render (spec 3.5 ContextSubscription). The fields after
// TokenCount are the harness's bookkeeping.
type Subscription struct {
	ID          string               `json:"sub_id"`
	Type        string               `json:"sub_type"`
	Target      string               `json:"target"`
	Zone        messages.ContextZone `json:"zone"`
	CreatedAt   time.Time            `json:"created_at"`
	TurnCreated int                  `json:"turn_created"`
	// ContentHash is the SHA-256 (hex) of the last materialized content;
	// for file_lines it stays the hash taken when the range was created (or
	// merged), so that a change at those lines marks the block stale.
	ContentHash string `json:"content_hash"`
	Active      bool   `json:"active"`
	TokenCount  int    `json:"token_count"`

	// HashTurn is the turn ContentHash was taken.
	HashTurn int `json:"hash_turn"`
	// LastChanged is the turn the materialized content last changed.
	LastChanged int `json:"last_changed"`
	// LastReferenced is the last turn an agent response named the target.
	LastReferenced int `json:"last_referenced"`
	// Stale is set for a file_lines subscription whose lines no longer hash
	// to ContentHash.
	Stale bool `json:"stale"`
	// Content is the last materialization.
	Content string `json:"-"`

	matTurn int // the turn Content was materialized in; -1 for never
}

// Sources are what subscriptions materialize from. Both are optional: a
// subscription whose source is missing materializes to a warning.
type Sources struct {
	// Files is the workspace file system for file and file_lines
	// subscriptions (fstest.MapFS in tests, os.DirFS in the daemon).
	Files fs.FS
	// QueryMemory runs a memory_query subscription's query in the scope and
	// returns the ranked results.
	QueryMemory func(query string) ([]messages.MemoryItem, error)
}

// SetSources installs what subscriptions read from.
func (w *Window) SetSources(s Sources) { w.sources = s }

// Subscriptions returns copies of the window's subscriptions, in creation
// order.
func (w *Window) Subscriptions() []Subscription {
	out := make([]Subscription, len(w.subs))
	for i, s := range w.subs {
		out[i] = *s
	}
	return out
}

// lineRange is a parsed file_lines target.
type lineRange struct {
	path       string
	start, end int
}

func (r lineRange) String() string {
	return r.path + ":" + strconv.Itoa(r.start) + "-" + strconv.Itoa(r.end)
}

func parseLines(target string) (lineRange, error) {
	i := strings.LastIndexByte(target, ':')
	if i <= 0 {
		return lineRange{}, fmt.Errorf("%w: file_lines target %q: want path:start-end", ErrInvalidSubscription, target)
	}
	a, b, ok := strings.Cut(target[i+1:], "-")
	start, err1 := strconv.Atoi(a)
	end, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || start < 1 || end < start {
		return lineRange{}, fmt.Errorf("%w: file_lines target %q: want path:start-end with 1 <= start <= end", ErrInvalidSubscription, target)
	}
	r := lineRange{path: target[:i], start: start, end: end}
	if !fs.ValidPath(r.path) {
		return lineRange{}, fmt.Errorf("%w: path %q is not a clean relative path", ErrInvalidSubscription, r.path)
	}
	return r, nil
}

// subPath is the file a file or file_lines subscription reads.
func (s *Subscription) subPath() string {
	if s.Type == SubFileLines {
		if r, err := parseLines(s.Target); err == nil {
			return r.path
		}
	}
	return s.Target
}

// Subscribe adds a subscription of type typ to target (a clean relative
// path; "path:start-end" for file_lines; the query for memory_query) in the
// workspace zone and returns its id. It deduplicates (spec 3.5): a
// whole-file subscription supersedes, and removes, the line ranges of the
// same file; a line range inside a subscribed file returns the file's id;
// line ranges that overlap or touch merge into the earliest, whose range
// becomes their union; subscribing again to the same target reactivates
// and returns the existing one. File subscriptions read the file now to
// take the content hash of spec 3.5.
func (w *Window) Subscribe(typ, target string, turn int, now time.Time) (string, error) {
	w.turn = max(w.turn, turn)
	switch typ {
	case SubFile:
		if !fs.ValidPath(target) {
			return "", fmt.Errorf("%w: path %q is not a clean relative path", ErrInvalidSubscription, target)
		}
		w.removeSubs(func(s *Subscription) bool { return s.Type == SubFileLines && s.subPath() == target })
	case SubFileLines:
		r, err := parseLines(target)
		if err != nil {
			return "", err
		}
		for _, s := range w.subs {
			if s.Type == SubFile && s.Target == r.path {
				s.reactivate(turn)
				return s.ID, nil
			}
		}
		return w.subscribeLines(r, turn, now)
	case SubMemoryQuery:
		if strings.TrimSpace(target) == "" {
			return "", fmt.Errorf("%w: memory_query target is empty", ErrInvalidSubscription)
		}
	default:
		return "", fmt.Errorf("%w: sub_type %q: want file, file_lines or memory_query", ErrInvalidSubscription, typ)
	}
	for _, s := range w.subs {
		if s.Type == typ && s.Target == target {
			s.reactivate(turn)
			return s.ID, nil
		}
	}
	s := w.newSub(typ, target, turn, now)
	if typ == SubFile {
		data, err := w.readFile(target)
		if err != nil {
			w.subs = w.subs[:len(w.subs)-1]
			return "", err
		}
		s.ContentHash = hashOf(data)
	}
	return s.ID, nil
}

func (w *Window) newSub(typ, target string, turn int, now time.Time) *Subscription {
	s := &Subscription{
		ID: "sub-" + strconv.Itoa(turn) + "-" + strconv.Itoa(len(w.subs)+1), Type: typ, Target: target,
		Zone: messages.ZoneWorkspace, CreatedAt: now.UTC(), TurnCreated: turn, Active: true,
		HashTurn: turn, LastChanged: turn, LastReferenced: turn, matTurn: -1,
	}
	for w.subByID(s.ID) != nil {
		s.ID += "x"
	}
	w.subs = append(w.subs, s)
	return s
}

// subscribeLines merges r with the line ranges of the same file it overlaps
// or touches.
func (w *Window) subscribeLines(r lineRange, turn int, now time.Time) (string, error) {
	var into *Subscription
	merged := r
	for changed := true; changed; {
		changed = false
		for _, s := range w.subs {
			if s.Type != SubFileLines || s.subPath() != r.path {
				continue
			}
			o, _ := parseLines(s.Target)
			if o.start > merged.end+1 || merged.start > o.end+1 {
				continue
			}
			if into == nil {
				into = s
			}
			if o.start < merged.start || o.end > merged.end {
				merged.start, merged.end = min(merged.start, o.start), max(merged.end, o.end)
				changed = true
			}
		}
	}
	if into == nil {
		into = w.newSub(SubFileLines, merged.String(), turn, now)
	} else {
		w.removeSubs(func(s *Subscription) bool {
			if s == into || s.Type != SubFileLines || s.subPath() != r.path {
				return false
			}
			o, _ := parseLines(s.Target)
			return o.start >= merged.start && o.end <= merged.end
		})
		into.reactivate(turn)
		if into.Target == merged.String() {
			return into.ID, nil
		}
		into.Target = merged.String()
		into.HashTurn, into.Stale, into.matTurn = turn, false, -1
	}
	data, err := w.readFile(r.path)
	if err != nil {
		w.removeSubs(func(s *Subscription) bool { return s == into })
		return "", err
	}
	into.ContentHash = hashOf(lines(data, merged.start, merged.end))
	return into.ID, nil
}

func (s *Subscription) reactivate(turn int) {
	s.Active = true
	s.LastReferenced = max(s.LastReferenced, turn)
}

func (w *Window) removeSubs(drop func(*Subscription) bool) {
	kept := w.subs[:0]
	for _, s := range w.subs {
		if !drop(s) {
			kept = append(kept, s)
		}
	}
	clear(w.subs[len(kept):])
	w.subs = kept
}

func (w *Window) subByID(id string) *Subscription {
	for _, s := range w.subs {
		if s.ID == id {
			return s
		}
	}
	return nil
}

// Unsubscribe deletes the subscription id.
func (w *Window) Unsubscribe(id string) error {
	if w.subByID(id) == nil {
		return fmt.Errorf("unsubscribe %q: %w", id, ErrUnknownSubscription)
	}
	w.removeSubs(func(s *Subscription) bool { return s.ID == id })
	return nil
}

// Reactivate turns a deactivated subscription back on (spec 3.5: "can be
// reactivated instantly by the harness"); it counts as a reference at turn.
// The next Materialize fills it.
func (w *Window) Reactivate(id string, turn int) error {
	s := w.subByID(id)
	if s == nil {
		return fmt.Errorf("reactivate %q: %w", id, ErrUnknownSubscription)
	}
	s.reactivate(turn)
	s.matTurn = -1
	return nil
}

// NoteReferences records that an agent response of turn mentioned the
// targets it contains (the file path of file and file_lines
// subscriptions, the query of memory_query ones), which keeps them alive
// for another subscription_ttl_turns turns. Call it with the response text
// at step 11.
func (w *Window) NoteReferences(turn int, response string) {
	for _, s := range w.subs {
		key := s.subPath()
		if s.Type == SubMemoryQuery {
			key = s.Target
		}
		if key != "" && strings.Contains(response, key) {
			s.LastReferenced = max(s.LastReferenced, turn)
		}
	}
}

// expireSubscriptions is tier-1 step 3: active subscriptions not referenced
// for subscription_ttl_turns turns are deactivated.
func (w *Window) expireSubscriptions(turn int, res *EvictionResult) {
	for _, s := range w.subs {
		if s.Active && turn-s.LastReferenced >= w.limits.SubscriptionTTLTurns {
			s.Active = false
			res.Deactivated = append(res.Deactivated, s.ID)
		}
	}
}

// SubscriptionWarning reports a subscription that could not be
// materialized or was deactivated for its size; the caller logs it.
type SubscriptionWarning struct {
	SubID   string
	Target  string
	Message string
}

// Materialize resolves every active subscription for turn (spec 5.7 render
// step 1). Files are read through Sources.Files at most once a turn: within
// the same turn the cached content is reused, and across turns content
// whose hash did not change keeps its cached rendering and token count.
// Memory queries always run again (memory_ops may have changed the store)
// and leave out memories the memory zone already holds. A materialization
// over max_subscription_tokens deactivates the subscription with a warning;
// a read or query error keeps the previous content with a warning.
func (w *Window) Materialize(turn int) []SubscriptionWarning {
	w.turn = max(w.turn, turn)
	var warns []SubscriptionWarning
	warn := func(s *Subscription, format string, args ...any) {
		warns = append(warns, SubscriptionWarning{SubID: s.ID, Target: s.Target, Message: fmt.Sprintf(format, args...)})
	}
	for _, s := range w.subs {
		if !s.Active {
			continue
		}
		var content string
		switch s.Type {
		case SubMemoryQuery:
			c, err := w.queryContent(s.Target)
			if err != nil {
				warn(s, "memory query: %v", err)
				continue
			}
			content = c
		default:
			if s.matTurn == turn {
				continue
			}
			data, err := w.readFile(s.subPath())
			if err != nil {
				warn(s, "%v", err)
				continue
			}
			if s.Type == SubFileLines {
				r, _ := parseLines(s.Target)
				data = lines(data, r.start, r.end)
				s.Stale = hashOf(data) != s.ContentHash
			}
			content = string(data)
		}
		s.matTurn = turn
		if content != s.Content || s.TokenCount == 0 {
			if s.Content != "" || s.TokenCount > 0 {
				s.LastChanged = turn
			}
			s.Content = content
			s.TokenCount = EstimateTokens(content)
			if s.Type != SubFileLines {
				s.ContentHash, s.HashTurn = hashOf([]byte(content)), turn
			}
		}
		if s.TokenCount > w.limits.MaxSubscriptionTokens {
			s.Active = false
			warn(s, "%d tokens exceed max_subscription_tokens %d; subscription deactivated", s.TokenCount, w.limits.MaxSubscriptionTokens)
		}
	}
	return warns
}

func (w *Window) readFile(path string) ([]byte, error) {
	if w.sources.Files == nil {
		return nil, fmt.Errorf("read %s: no workspace file system", path)
	}
	data, err := fs.ReadFile(w.sources.Files, path)
	if err != nil {
		return nil, fmt.Errorf("read subscribed file: %w", err)
	}
	return data, nil
}

// queryContent runs a memory query and renders the results the memory zone
// does not already hold, one per paragraph.
func (w *Window) queryContent(query string) (string, error) {
	if w.sources.QueryMemory == nil {
		return "", fmt.Errorf("query %q: no memory source", query)
	}
	items, err := w.sources.QueryMemory(query)
	if err != nil {
		return "", fmt.Errorf("query %q: %w", query, err)
	}
	var b strings.Builder
	for i := range items {
		if w.HoldsMemory("memory:" + items[i].MemoryID) {
			continue
		}
		content := items[i].Content
		if items[i].Taint == messages.TaintExternal {
			content = ScrubInjection(content)
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(content)
	}
	return b.String(), nil
}

// lines returns lines start..end (1-based, inclusive) of data, clipped to
// its end.
func lines(data []byte, start, end int) []byte {
	line := 1
	from := -1
	for i := 0; i <= len(data); i++ {
		if line == start && from < 0 {
			from = i
		}
		if i == len(data) || data[i] == '\n' {
			if line == end {
				if from < 0 {
					return nil
				}
				return bytes.Clone(data[from:i])
			}
			line++
		}
	}
	if from < 0 {
		return nil
	}
	return bytes.TrimSuffix(bytes.Clone(data[from:]), []byte("\n"))
}

func hashOf(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
