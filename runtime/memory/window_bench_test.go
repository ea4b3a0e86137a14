package memory

import (
	"testing"
	"time"
)

// BenchmarkParseWindow is the time parsing every turn's auto-retrieval
// does: a customer's message naming no time, and one naming a day.
func BenchmarkParseWindow(b *testing.B) {
	now := time.Date(2026, 3, 18, 15, 4, 0, 0, time.UTC)
	for _, q := range []struct{ name, text string }{
		{"no time", "Hello, customer 7 here with question 42: when are you open on Saturdays, and do you deliver?"},
		{"a day", "Hello, what did we talk about yesterday regarding the delivery of my order?"},
	} {
		b.Run(q.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ParseWindow(q.text, now, time.UTC)
			}
		})
	}
}
