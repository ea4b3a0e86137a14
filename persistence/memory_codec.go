package persistence

import (
	"bytes"

	"github.com/silas-ai/silas/messages"
)

// encodeMemory is encodeJSON for a memory item, without the members that
// are null in most items. Every turn stores two items, and these nulls
// were about 190 of their 600-odd bytes, rewritten at every compaction.
// A member left out decodes exactly as a null one (the field keeps its
// zero value), so stored items read back unchanged, and items stored
// before this encoding read as they always did.
func encodeMemory(m *messages.MemoryItem) ([]byte, error) {
	b, err := encodeJSON(m)
	if err != nil {
		return nil, err
	}
	return stripMemoryNulls(b), nil
}

// stripMemoryNulls removes the null members of MemoryItem's nullable
// fields from its encoding. A match is always a member of the item
// itself: inside a JSON string a quote is escaped, so `,"valid_from":null`
// cannot occur there, and every field encoded before these is a scalar.
func stripMemoryNulls(b []byte) []byte {
	for _, m := range [...]string{
		`,"valid_from":null`, `,"valid_until":null`, `,"last_accessed":null`,
		`,"semantic_tags":null`, `,"entity_refs":null`, `,"causal_refs":null`,
		`,"temporal_next":null`, `,"temporal_prev":null`, `,"session_id":null`,
		`,"embedding":null`,
	} {
		if i := bytes.Index(b, []byte(m)); i >= 0 {
			b = append(b[:i], b[i+len(m):]...)
		}
	}
	return b
}
