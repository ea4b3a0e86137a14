package contextmgr

import (
	"errors"
	"strings"
	"testing"

	"github.com/silas-ai/silas/messages"
)

// item is an item that costs tokens in its zone, its block's delimiters
// included (delimiterTokens): the tests' arithmetic is in what the window
// counts.
func item(id string, zone messages.ContextZone, tokens int, pinned bool) messages.ContextItem {
	it := messages.ContextItem{CtxID: id, Zone: zone, Content: strings.Repeat("x", tokens*4), Kind: messages.KindMessage, Taint: messages.TaintAuth, Source: "channel:web", Pinned: pinned}
	it.TokenCount = max(tokens-delimiterTokens(&it), 1)
	return it
}

func TestZoneBudgetHeadroom(t *testing.T) {
	tests := []struct {
		name                                string
		system                              int
		chronicle, memory, workspace, spare int
	}{
		// The system zone counts at most SystemMax: allocable = 1000-100 = 900.
		{"system over cap", 300, 405, 180, 135, 180},
		// allocable = 1000-40 = 960.
		{"system under cap", 40, 432, 192, 144, 192},
		{"empty system", 0, 450, 200, 150, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := New(Budget{Total: 1000, SystemMax: 100, ChroniclePct: 0.45, MemoryPct: 0.2, WorkspacePct: 0.15})
			if tt.system > 0 {
				w.Add(item("s", messages.ZoneSystem, tt.system, true))
			}
			for _, c := range []struct {
				zone messages.ContextZone
				want int
			}{{messages.ZoneChronicle, tt.chronicle}, {messages.ZoneMemory, tt.memory}, {messages.ZoneWorkspace, tt.workspace}} {
				if got := w.ZoneBudget(c.zone); got != c.want {
					t.Errorf("%s budget = %d, want %d", c.zone, got, c.want)
				}
			}
			if got := w.Headroom(); got != tt.spare {
				t.Errorf("headroom = %d, want %d", got, tt.spare)
			}
		})
	}
}

func TestAddIsABackstopOnly(t *testing.T) {
	w := New(Budget{Total: 100, ChroniclePct: 0.5})
	for i, id := range []string{"pinned", "a", "b"} {
		it := item(id, messages.ZoneChronicle, 30, id == "pinned")
		it.TurnNumber = i
		if ev := w.Add(it); len(ev) != 0 {
			t.Fatalf("Add(%s) evicted %v under the total", id, ids(ev))
		}
	}
	// 90 tokens, over the zone budget of 50 but under the total: Add leaves
	// it to EnforceBudget.
	over := item("c", messages.ZoneChronicle, 30, false)
	over.TurnNumber = 3
	ev := w.Add(over)
	// 120 > 100: evict oldest unpinned, not the current turn, down to 80.
	if got := strings.Join(ids(ev), ","); got != "a,b" {
		t.Fatalf("backstop evicted %q, want a,b", got)
	}
	if got := strings.Join(ids(w.Items(messages.ZoneChronicle)), ","); got != "pinned,c" {
		t.Fatalf("kept %q, want pinned,c", got)
	}
}

func TestAddKeepsNewestEvenIfOversized(t *testing.T) {
	w := New(Budget{Total: 10, ChroniclePct: 0.5})
	w.Add(item("big", messages.ZoneChronicle, 50, false))
	if got := ids(w.Items(messages.ZoneChronicle)); len(got) != 1 {
		t.Fatalf("kept %v, want the newest item", got)
	}
}

func TestAddCountsTokens(t *testing.T) {
	w := New(Budget{Total: 1000, ChroniclePct: 0.5})
	w.Add(messages.ContextItem{CtxID: "1", Zone: messages.ZoneChronicle, Content: "The quick brown fox jumps over the lazy dog.", Kind: messages.KindMessage})
	if got := w.Items(messages.ZoneChronicle)[0].TokenCount; got != 10 {
		t.Fatalf("TokenCount = %d, want 10", got)
	}
	// The window counts what the model is sent: the content and its
	// block's delimiters.
	if got, want := w.Usage(), EstimateTokens(w.Render()); got < want-2 || got > want {
		t.Fatalf("Usage = %d, want the rendered block's %d (content 10)", got, want)
	}
}

func TestReplace(t *testing.T) {
	w := New(Budget{Total: 1000, SystemMax: 500})
	w.Add(messages.ContextItem{CtxID: "persona", Zone: messages.ZoneSystem, Content: "be brief", Pinned: true, Kind: messages.KindSystem})
	if !w.Replace(messages.ContextItem{CtxID: "persona", Zone: messages.ZoneSystem, Content: "be warm", Pinned: true, Kind: messages.KindSystem}) {
		t.Fatal("Replace did not find the persona item")
	}
	if got := w.System(); got != "be warm\n" {
		t.Fatalf("System() = %q", got)
	}
	if w.Replace(messages.ContextItem{CtxID: "nope", Zone: messages.ZoneSystem}) {
		t.Fatal("Replace found a missing item")
	}
}

func TestSetProfile(t *testing.T) {
	w := New(Budget{Total: 1000, SystemMax: 100, ChroniclePct: 0.45, MemoryPct: 0.2, WorkspacePct: 0.15})
	if err := w.SetProfiles(map[string]Profile{
		"conversation": {ChroniclePct: 0.45, MemoryPct: 0.2, WorkspacePct: 0.15},
		"coding":       {ChroniclePct: 0.2, MemoryPct: 0.1, WorkspacePct: 0.5},
	}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		profile   string
		wantErr   error
		workspace int
		current   string
	}{
		{"switch to coding", "coding", nil, 500, "coding"},
		{"unknown keeps budget", "gaming", ErrUnknownProfile, 500, "coding"},
		{"empty is not a fallback", "", ErrUnknownProfile, 500, "coding"},
		{"back to conversation", "conversation", nil, 150, "conversation"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := w.SetProfile(tt.profile)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("SetProfile(%q) error = %v, want %v", tt.profile, err, tt.wantErr)
			}
			if got := w.ZoneBudget(messages.ZoneWorkspace); got != tt.workspace {
				t.Errorf("workspace budget = %d, want %d", got, tt.workspace)
			}
			if w.Profile() != tt.current {
				t.Errorf("Profile() = %q, want %q", w.Profile(), tt.current)
			}
		})
	}
}

func TestSetProfileShrinkEvictsAtNextEnforce(t *testing.T) {
	w := New(Budget{Total: 1000, ChroniclePct: 0.6})
	_ = w.SetProfiles(map[string]Profile{"small": {ChroniclePct: 0.1}})
	for i := range 10 {
		it := item(string(rune('a'+i)), messages.ZoneChronicle, 50, false)
		it.TurnNumber = i
		w.Add(it)
	}
	if _, err := w.SetProfile("small"); err != nil {
		t.Fatal(err)
	}
	res := w.EnforceBudget(10)
	if got := w.ZoneTokens(messages.ZoneChronicle); got > 100 {
		t.Fatalf("chronicle holds %d tokens after the shrink, want <= 100 (evicted %v)", got, ids(res.Evicted))
	}
	// 500 tokens into a budget of 100: eviction frees the slack too
	// (evictionSlackPct), down to 80 tokens, so 9 items of 50 go.
	if res.Tier != TierHeuristic || len(res.Evicted) != 9 {
		t.Fatalf("tier %v evicted %d, want heuristic and 9", res.Tier, len(res.Evicted))
	}
}

func TestValidation(t *testing.T) {
	bad := []struct {
		name string
		mod  func(*Limits)
	}{
		{"eviction zero", func(l *Limits) { l.EvictionThresholdPct = 0 }},
		{"scorer below eviction", func(l *Limits) { l.ScorerThresholdPct = 0.5 }},
		{"sub tokens", func(l *Limits) { l.MaxSubscriptionTokens = 0 }},
		{"ttl", func(l *Limits) { l.SubscriptionTTLTurns = 0 }},
		{"mask negative", func(l *Limits) { l.ObservationMaskAfterTurns = -1 }},
		{"pattern", func(l *Limits) { l.TrivialPattern = "(" }},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			w := New(Budget{Total: 100})
			l := DefaultLimits()
			tt.mod(&l)
			if err := w.SetLimits(l); !errors.Is(err, ErrInvalidLimits) {
				t.Fatalf("SetLimits error = %v, want ErrInvalidLimits", err)
			}
			if w.Limits() != DefaultLimits() {
				t.Fatal("a refused SetLimits changed the limits")
			}
		})
	}
	profiles := []struct {
		name string
		p    Profile
		ok   bool
	}{
		{"default", Profile{0.45, 0.2, 0.15}, true},
		{"exactly 0.80", Profile{0.4, 0.2, 0.2}, true},
		{"over 0.80", Profile{0.5, 0.2, 0.15}, false},
		{"negative", Profile{-0.1, 0.2, 0.1}, false},
	}
	for _, tt := range profiles {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.p.Validate(); (err == nil) != tt.ok {
				t.Fatalf("Validate() = %v, want ok=%v", err, tt.ok)
			}
		})
	}
}

func ids(items []messages.ContextItem) []string {
	out := make([]string, len(items))
	for i := range items {
		out[i] = items[i].CtxID
	}
	return out
}
