package persistence

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/silas-ai/silas/messages"
)

// TestEncodeMemoryDropsOnlyNulls: an item stored without its null members
// decodes to the same item, whether its nullable fields are null, empty or
// set, and content that spells a null member is kept as it is.
func TestEncodeMemoryDropsOnlyNulls(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	next, session := "m2", "s1"
	base := messages.MemoryItem{MemoryID: "m1", Content: "Echo: hello", MemoryType: messages.MemoryType("episode"),
		ReingestionTier: messages.TierLowReingestion, TrustLevel: messages.TrustLevel("working"), Taint: messages.TaintExternal,
		CreatedAt: at, UpdatedAt: at}
	set := base
	set.ValidFrom, set.LastAccessed, set.TemporalNext, set.SessionID = &at, &at, &next, &session
	set.SemanticTags, set.EntityRefs, set.Embedding = []string{"a"}, []string{}, []float32{0.5}
	spelled := base
	spelled.Content = `say ,"valid_from":null and "session_id":null` + "\n"
	for name, m := range map[string]messages.MemoryItem{"all null": base, "set and empty": set, "content spells a member": spelled} {
		t.Run(name, func(t *testing.T) {
			full, err := encodeJSON(&m)
			if err != nil {
				t.Fatal(err)
			}
			short, err := encodeMemory(&m)
			if err != nil {
				t.Fatal(err)
			}
			var got messages.MemoryItem
			if err := decodeJSON(short, &got); err != nil {
				t.Fatalf("decode %s: %v", short, err)
			}
			if !reflect.DeepEqual(got, m) {
				t.Fatalf("decoded %+v, want %+v", got, m)
			}
			if strings.Contains(string(short), ":null") != strings.Contains(m.Content, ":null") {
				t.Errorf("encoding %s still has a null member", short)
			}
			if name == "all null" && len(full)-len(short) < 150 {
				t.Errorf("saved %d of %d bytes, want the null members gone", len(full)-len(short), len(full))
			}
		})
	}
}
