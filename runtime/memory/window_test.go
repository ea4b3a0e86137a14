package memory

import (
	"testing"
	"time"
)

func TestParseWindow(t *testing.T) {
	vienna, err := time.LoadLocation("Europe/Vienna")
	if err != nil {
		t.Fatal(err)
	}
	// Wednesday 18 March 2026, 15:04 in Vienna (UTC+1; summer time begins
	// on 29 March).
	now := time.Date(2026, 3, 18, 15, 4, 0, 0, vienna)
	day := func(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, vienna) }
	tests := []struct {
		query    string
		from, to time.Time
		phrase   string
		rest     string
	}{
		{"what did I say yesterday about tea?", day(2026, 3, 17), day(2026, 3, 18), "yesterday", "what did I say about tea?"},
		{"Today", day(2026, 3, 18), day(2026, 3, 19), "Today", ""},
		{"what happened this morning", day(2026, 3, 18), day(2026, 3, 19), "this morning", "what happened"},
		{"the day before yesterday", day(2026, 3, 16), day(2026, 3, 17), "the day before yesterday", ""},
		{"what did we discuss last night", day(2026, 3, 17).Add(17 * time.Hour), day(2026, 3, 18).Add(6 * time.Hour), "last night", "what did we discuss"},
		{"notes from last week", day(2026, 3, 9), day(2026, 3, 16), "last week", "notes from"},
		{"this week", day(2026, 3, 16), day(2026, 3, 23), "this week", ""},
		{"plans last month", day(2026, 2, 1), day(2026, 3, 1), "last month", "plans"},
		{"this year", day(2026, 1, 1), day(2027, 1, 1), "this year", ""},
		{"last year", day(2025, 1, 1), day(2026, 1, 1), "last year", ""},
		{"what did I do on Monday?", day(2026, 3, 16), day(2026, 3, 17), "on Monday", "what did I do ?"},
		{"Wednesday", day(2026, 3, 18), day(2026, 3, 19), "Wednesday", ""},
		{"last Wednesday", day(2026, 3, 11), day(2026, 3, 12), "last Wednesday", ""},
		{"on Sunday", day(2026, 3, 15), day(2026, 3, 16), "on Sunday", ""},
		{"in March", day(2026, 3, 1), day(2026, 4, 1), "in March", ""},
		{"last March", day(2025, 3, 1), day(2025, 4, 1), "last March", ""},
		{"during December", day(2025, 12, 1), day(2026, 1, 1), "during December", ""},
		{"in may we", day(2025, 5, 1), day(2025, 6, 1), "in may", "we"},
		{"in March 2024", day(2024, 3, 1), day(2024, 4, 1), "in March 2024", ""},
		{"on March 14", day(2026, 3, 14), day(2026, 3, 15), "on March 14", ""},
		{"the 20th of March", day(2025, 3, 20), day(2025, 3, 21), "the 20th of March", ""},
		{"March 20th, 2026", day(2026, 3, 20), day(2026, 3, 21), "March 20th, 2026", ""},
		{"in 2025", day(2025, 1, 1), day(2026, 1, 1), "in 2025", ""},
		{"on 2026-03-14 we met", day(2026, 3, 14), day(2026, 3, 15), "on 2026-03-14", "we met"},
		{"2026-02", day(2026, 2, 1), day(2026, 3, 1), "2026-02", ""},
		{"between 2026-03-01 and 2026-03-10", day(2026, 3, 1), day(2026, 3, 11), "between 2026-03-01 and 2026-03-10", ""},
		{"since 2026-03-10", day(2026, 3, 10), now.Add(time.Nanosecond), "since 2026-03-10", ""},
		{"3 days ago", day(2026, 3, 15), day(2026, 3, 16), "3 days ago", ""},
		{"a week ago", day(2026, 3, 9), day(2026, 3, 16), "a week ago", ""},
		{"two months ago", day(2026, 1, 1), day(2026, 2, 1), "two months ago", ""},
		{"in the last 3 days", now.AddDate(0, 0, -3), now.Add(time.Nanosecond), "the last 3 days", "in"},
		{"over the past few weeks", now.AddDate(0, 0, -21), now.Add(time.Nanosecond), "the past few weeks", "over"},
		{"in the past week", now.AddDate(0, 0, -7), now.Add(time.Nanosecond), "the past week", "in"},
		{"yesterday or on Monday", day(2026, 3, 17), day(2026, 3, 18), "yesterday", "or on Monday"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			w, rest, ok := ParseWindow(tt.query, now, vienna)
			if !ok {
				t.Fatalf("no window found")
			}
			if !w.From.Equal(tt.from) || !w.To.Equal(tt.to) {
				t.Errorf("window [%s, %s), want [%s, %s)", w.From.In(vienna), w.To.In(vienna), tt.from, tt.to)
			}
			if w.Phrase != tt.phrase || rest != tt.rest {
				t.Errorf("phrase %q rest %q, want %q and %q", w.Phrase, rest, tt.phrase, tt.rest)
			}
			if w.From.Location() != time.UTC {
				t.Errorf("window not in UTC: %s", w.From.Location())
			}
		})
	}
}

func TestParseWindowFindsNoTime(t *testing.T) {
	now := time.Date(2026, 3, 18, 15, 4, 0, 0, time.UTC)
	for _, q := range []string{
		"what vehicle do I drive",
		"I swim on Mondays",         // a habit, not a day
		"you may go",                // the verb, not the month
		"we march on",               // the verb
		"call 2026-13-45",           // no such date
		"on February 30",            // no such day
		"order 4711 in 12345",       // not a year
		"the yesterdays of my life", // not the word
		"",
	} {
		if w, rest, ok := ParseWindow(q, now, time.UTC); ok || rest != q {
			t.Errorf("%q: found %q [%s, %s), rest %q", q, w.Phrase, w.From, w.To, rest)
		}
	}
}

func TestWindowContains(t *testing.T) {
	w := Window{From: time.Unix(100, 0), To: time.Unix(200, 0)}
	for _, c := range []struct {
		at   int64
		want bool
	}{{99, false}, {100, true}, {199, true}, {200, false}} {
		if got := w.Contains(time.Unix(c.at, 0)); got != c.want {
			t.Errorf("Contains(%d) = %v", c.at, got)
		}
	}
}
