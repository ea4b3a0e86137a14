package memory

import (
	"strings"
	"testing"
	"time"
)

// FuzzParseWindow: any user message parses without a panic into a
// non-empty window that the query names, and the rest is the query without
// the phrase.
func FuzzParseWindow(f *testing.F) {
	for _, s := range []string{
		"what did I say yesterday about tea?", "on Monday", "last 3 days", "in March 2024",
		"between 2026-03-01 and 2026-03-10", "the 31st of February", "999 years ago",
		"since 2200-12-31", "2026-13", "a couple of weeks ago", "", "   ",
	} {
		f.Add(s)
	}
	now := time.Date(2026, 3, 18, 15, 4, 0, 0, time.UTC)
	vienna, err := time.LoadLocation("Europe/Vienna")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, q string) {
		w, rest, ok := ParseWindow(q, now, vienna)
		if !ok {
			if rest != q {
				t.Fatalf("no window, but rest %q differs from the query", rest)
			}
			return
		}
		if !w.From.Before(w.To) {
			t.Fatalf("empty window [%s, %s) for %q", w.From, w.To, q)
		}
		if !strings.Contains(q, w.Phrase) || w.Phrase == "" {
			t.Fatalf("phrase %q is not in the query %q", w.Phrase, q)
		}
		if len(rest) > len(q) {
			t.Fatalf("rest %q longer than the query %q", rest, q)
		}
	})
}
