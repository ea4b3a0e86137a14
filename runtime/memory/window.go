package memory

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Window is a span of time a query names, [From, To).
type Window struct {
	From, To time.Time
	// Phrase is the text that named it, as it appears in the query.
	Phrase string
}

// Contains reports whether t falls inside the window.
func (w Window) Contains(t time.Time) bool { return !t.Before(w.From) && t.Before(w.To) }

// ParseWindow finds the time expression in query and returns the window
// it names, computed at now in the user's zone loc (days start at local
// midnight, weeks on Monday), in UTC, and the query with the expression
// cut out, for the strategies that match words and meaning. ok is false
// when the query names no time; when it names several, the first wins
// (the longest, of those starting at the same place). Only the first
// 2 KiB of the query are read.
//
// Understood (case-insensitive, English):
//
//	today, this morning, tonight ...        today
//	yesterday; the day before yesterday     that day
//	last night                              yesterday 17:00 to today 06:00
//	3 days ago, a week ago, 2 months ago    that day, ISO week, month or year
//	last 3 days, past two weeks             from that long before now until now
//	the past week, the past month           the same, for one unit
//	this week / month / year                the calendar unit holding now
//	last week / month / year                the calendar unit before it
//	on Monday, Monday, this Monday          the latest Monday up to today
//	last Monday                             the latest Monday before today
//	in March, during March, last March      the latest March begun (last: before this one)
//	March 2026, in March 2026               that month
//	March 14, 14th of March, March 14 2026  that day (the latest begun, without a year)
//	in 2025, during 2025                    that year
//	2026-03-14; 2026-03                     that day; that month
//	between 2026-03-01 and 2026-03-10       those days, both included
//	since 2026-03-01                        from that day until now
//
// A plural weekday ("on Mondays") names a habit, not a day, and is left
// in the query.
func ParseWindow(query string, now time.Time, loc *time.Location) (w Window, rest string, ok bool) {
	if loc == nil {
		loc = time.UTC
	}
	now = now.In(loc)
	// Lower-cased byte for byte (ASCII only, so offsets stay those of the
	// query): the patterns are ASCII and need no case folding, and each
	// rule's cheap word check skips the regular expressions a message
	// cannot match, which most messages name no time.
	scan := asciiLower(query[:min(len(query), maxWindowScan)])
	bestStart, bestLen := -1, 0
	for _, r := range windowRules {
		if !r.need(scan) {
			continue
		}
		for off := 0; off < len(scan); {
			idx := r.re.FindStringSubmatchIndex(scan[off:])
			if idx == nil {
				break
			}
			for i := range idx {
				if idx[i] >= 0 {
					idx[i] += off
				}
			}
			start, end := idx[0], idx[1]
			if bestStart >= 0 && (start > bestStart || (start == bestStart && end-start <= bestLen)) {
				break // later matches of this rule start later still
			}
			groups := make([]string, len(idx)/2)
			for g := range groups {
				if idx[2*g] >= 0 {
					groups[g] = scan[idx[2*g]:idx[2*g+1]]
				}
			}
			if from, to, valid := r.window(groups, now); valid && from.Before(to) {
				bestStart, bestLen = start, end-start
				w = Window{From: from.UTC(), To: to.UTC(), Phrase: query[start:end]}
				break // the first valid match of a rule is its earliest
			}
			off = max(end, start+1)
		}
	}
	if bestStart < 0 {
		return Window{}, query, false
	}
	rest = strings.Join(strings.Fields(query[:bestStart]+" "+query[bestStart+bestLen:]), " ")
	return w, rest, true
}

// maxWindowScan is how much of a query is searched for a time expression:
// a question names its time early, and a pasted document of many
// kilobytes must not cost a turn more than a bounded scan.
const maxWindowScan = 2048

// windowRule is one kind of time expression.
type windowRule struct {
	// need is a cheap check of the lower-cased text: false when the
	// expression cannot occur in it.
	need func(lower string) bool
	re   *regexp.Regexp
	// window computes the span from the match's lower-cased groups (0 is
	// the whole match); false when the words name no real date.
	window func(g []string, now time.Time) (from, to time.Time, ok bool)
}

const (
	weekdayNames = `monday|tuesday|wednesday|thursday|friday|saturday|sunday`
	monthNames   = `january|february|march|april|may|june|july|august|september|october|november|december`
	countWords   = `\d{1,3}|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|a\s+few|few|a\s+couple\s+of|couple\s+of`
	unitNames    = `day|week|month|year`
	isoDate      = `(\d{4})-(\d{2})-(\d{2})`
	ordinal      = `(\d{1,2})(?:st|nd|rd|th)?`
)

// rx compiles a pattern, matched against lower-cased text, bounded by
// word boundaries.
func rx(p string) *regexp.Regexp { return regexp.MustCompile(`\b` + p + `\b`) }

// anyOf is a need: one of the words occurs.
func anyOf(words ...string) func(string) bool {
	return func(l string) bool {
		for _, w := range words {
			if strings.Contains(l, w) {
				return true
			}
		}
		return false
	}
}

// both is a need: a and b.
func both(a, b func(string) bool) func(string) bool {
	return func(l string) bool { return a(l) && b(l) }
}

// Needs of the rules.
var (
	needISO      = func(l string) bool { return strings.Contains(l, "-") && strings.ContainsAny(l, "0123456789") }
	needDigit    = func(l string) bool { return strings.ContainsAny(l, "0123456789") }
	needUnit     = anyOf("day", "week", "month", "year")
	needWeekday  = anyOf(strings.Split(weekdayNames, "|")...)
	needMonth    = anyOf(strings.Split(monthNames, "|")...)
	needLastPast = anyOf("last", "past", "previous")
	needYear     = func(l string) bool { return wordThenDigit(l, "in") || wordThenDigit(l, "during") }
)

// wordThenDigit reports whether w occurs followed by spaces and a digit.
func wordThenDigit(l, w string) bool {
	for i := strings.Index(l, w); i >= 0; {
		j := i + len(w)
		k := j
		for k < len(l) && (l[k] == ' ' || l[k] == '\t' || l[k] == '\n') {
			k++
		}
		if k > j && k < len(l) && '0' <= l[k] && l[k] <= '9' {
			return true
		}
		next := strings.Index(l[j:], w)
		if next < 0 {
			return false
		}
		i = j + next
	}
	return false
}

// asciiLower lower-cases the ASCII letters of s, leaving every other byte
// as it is.
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'A' <= c && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

var windowRules = []windowRule{
	{both(anyOf("between", "from"), needISO), rx(`(?:between|from)\s+` + isoDate + `\s+(?:and|to|until|till)\s+` + isoDate), func(g []string, now time.Time) (time.Time, time.Time, bool) {
		a, okA := ymd(now.Location(), g[1], g[2], g[3])
		b, okB := ymd(now.Location(), g[4], g[5], g[6])
		return a, b.AddDate(0, 0, 1), okA && okB
	}},
	{both(anyOf("since"), needISO), rx(`since\s+` + isoDate), func(g []string, now time.Time) (time.Time, time.Time, bool) {
		a, ok := ymd(now.Location(), g[1], g[2], g[3])
		return a, now.Add(time.Nanosecond), ok
	}},
	{needISO, rx(`(?:on\s+)?` + isoDate), func(g []string, now time.Time) (time.Time, time.Time, bool) {
		d, ok := ymd(now.Location(), g[1], g[2], g[3])
		return d, d.AddDate(0, 0, 1), ok
	}},
	{needISO, rx(`(\d{4})-(\d{2})`), func(g []string, now time.Time) (time.Time, time.Time, bool) {
		d, ok := ymd(now.Location(), g[1], g[2], "01")
		return d, d.AddDate(0, 1, 0), ok
	}},
	{anyOf("yesterday"), rx(`(?:the\s+)?day\s+before\s+yesterday`), func(_ []string, now time.Time) (time.Time, time.Time, bool) {
		d := midnight(now).AddDate(0, 0, -2)
		return d, d.AddDate(0, 0, 1), true
	}},
	{anyOf("yesterday"), rx(`yesterday`), func(_ []string, now time.Time) (time.Time, time.Time, bool) {
		d := midnight(now).AddDate(0, 0, -1)
		return d, d.AddDate(0, 0, 1), true
	}},
	{anyOf("today", "morning", "afternoon", "evening", "tonight"), rx(`(?:today|this\s+morning|this\s+afternoon|this\s+evening|tonight)`), func(_ []string, now time.Time) (time.Time, time.Time, bool) {
		d := midnight(now)
		return d, d.AddDate(0, 0, 1), true
	}},
	{anyOf("night"), rx(`last\s+night`), func(_ []string, now time.Time) (time.Time, time.Time, bool) {
		d := midnight(now)
		return d.AddDate(0, 0, -1).Add(17 * time.Hour), d.Add(6 * time.Hour), true
	}},
	{both(anyOf("ago"), needUnit), rx(`(` + countWords + `)\s+(` + unitNames + `)s?\s+ago`), func(g []string, now time.Time) (time.Time, time.Time, bool) {
		n, ok := count(g[1])
		if !ok {
			return time.Time{}, time.Time{}, false
		}
		start := unitStart(g[2], shift(g[2], now, -n))
		return start, unitNext(g[2], start), true
	}},
	{both(needLastPast, needUnit), rx(`(?:the\s+)?(?:last|past|previous)\s+(` + countWords + `)\s+(` + unitNames + `)s`), func(g []string, now time.Time) (time.Time, time.Time, bool) {
		n, ok := count(g[1])
		return shift(g[2], now, -n), now.Add(time.Nanosecond), ok
	}},
	{both(anyOf("past"), needUnit), rx(`(?:the\s+)?past\s+(` + unitNames + `)`), func(g []string, now time.Time) (time.Time, time.Time, bool) {
		return shift(g[1], now, -1), now.Add(time.Nanosecond), true
	}},
	{both(anyOf("this"), needUnit), rx(`this\s+(week|month|year)`), func(g []string, now time.Time) (time.Time, time.Time, bool) {
		start := unitStart(g[1], now)
		return start, unitNext(g[1], start), true
	}},
	{both(needLastPast, needUnit), rx(`(?:last|previous)\s+(week|month|year)`), func(g []string, now time.Time) (time.Time, time.Time, bool) {
		start := unitStart(g[1], shift(g[1], unitStart(g[1], now), -1))
		return start, unitNext(g[1], start), true
	}},
	{needWeekday, rx(`(?:(on|last|this|past)\s+)?(` + weekdayNames + `)`), func(g []string, now time.Time) (time.Time, time.Time, bool) {
		want := weekdays[g[2]]
		today := midnight(now)
		back := (int(today.Weekday()) - int(want) + 7) % 7
		if back == 0 && (g[1] == "last" || g[1] == "past") {
			back = 7
		}
		d := today.AddDate(0, 0, -back)
		return d, d.AddDate(0, 0, 1), true
	}},
	{both(needMonth, needDigit), rx(`(?:on\s+)?(?:the\s+)?(` + monthNames + `)\s+` + ordinal + `(?:,?\s+(\d{4}))?`), func(g []string, now time.Time) (time.Time, time.Time, bool) {
		return dayOfMonth(now, g[1], g[2], g[3])
	}},
	{both(needMonth, needDigit), rx(`(?:on\s+)?(?:the\s+)?` + ordinal + `\s+(?:of\s+)?(` + monthNames + `)(?:,?\s+(\d{4}))?`), func(g []string, now time.Time) (time.Time, time.Time, bool) {
		return dayOfMonth(now, g[2], g[1], g[3])
	}},
	{both(needMonth, needDigit), rx(`(?:(?:in|during)\s+)?(` + monthNames + `)\s+(\d{4})`), func(g []string, now time.Time) (time.Time, time.Time, bool) {
		d, ok := ymd(now.Location(), g[2], strconv.Itoa(int(months[g[1]])), "1")
		return d, d.AddDate(0, 1, 0), ok
	}},
	{needMonth, rx(`(in|during|last|this)\s+(` + monthNames + `)`), func(g []string, now time.Time) (time.Time, time.Time, bool) {
		m := months[g[2]]
		y := now.Year()
		if m > now.Month() || (g[1] == "last" && m == now.Month()) {
			y--
		}
		d := time.Date(y, m, 1, 0, 0, 0, 0, now.Location())
		return d, d.AddDate(0, 1, 0), true
	}},
	{needYear, rx(`(?:in|during)\s+(\d{4})`), func(g []string, now time.Time) (time.Time, time.Time, bool) {
		y, _ := strconv.Atoi(g[1])
		if y < 1970 || y > 2200 {
			return time.Time{}, time.Time{}, false
		}
		d := time.Date(y, 1, 1, 0, 0, 0, 0, now.Location())
		return d, d.AddDate(1, 0, 0), true
	}},
}

var weekdays = map[string]time.Weekday{
	"sunday": time.Sunday, "monday": time.Monday, "tuesday": time.Tuesday, "wednesday": time.Wednesday,
	"thursday": time.Thursday, "friday": time.Friday, "saturday": time.Saturday,
}

var months = map[string]time.Month{
	"january": time.January, "february": time.February, "march": time.March, "april": time.April,
	"may": time.May, "june": time.June, "july": time.July, "august": time.August,
	"september": time.September, "october": time.October, "november": time.November, "december": time.December,
}

var countNames = map[string]int{
	"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
	"eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "few": 3, "couple of": 2,
}

// count reads a count word or number (1 to 999).
func count(s string) (int, bool) {
	s = strings.Join(strings.Fields(strings.TrimPrefix(strings.TrimPrefix(s, "a "), "a\t")), " ")
	if n, ok := countNames[s]; ok {
		return n, true
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n > 0
}

// ymd builds the local midnight of a date in loc; false when the numbers
// name no date (2026-02-30, month 13, a year outside 1970 to 2200).
func ymd(loc *time.Location, y, m, d string) (time.Time, bool) {
	yi, err1 := strconv.Atoi(y)
	mi, err2 := strconv.Atoi(m)
	di, err3 := strconv.Atoi(d)
	if err1 != nil || err2 != nil || err3 != nil || yi < 1970 || yi > 2200 || mi < 1 || mi > 12 || di < 1 || di > 31 {
		return time.Time{}, false
	}
	t := time.Date(yi, time.Month(mi), di, 0, 0, 0, 0, loc)
	return t, t.Day() == di
}

// midnight is the start of t's day in t's zone.
func midnight(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, t.Location())
}

// shift moves t by n units.
func shift(unit string, t time.Time, n int) time.Time {
	switch unit {
	case "week":
		return t.AddDate(0, 0, 7*n)
	case "month":
		return t.AddDate(0, n, 0)
	case "year":
		return t.AddDate(n, 0, 0)
	}
	return t.AddDate(0, 0, n)
}

// unitStart is the start of the calendar unit holding t; weeks start on
// Monday (ISO 8601).
func unitStart(unit string, t time.Time) time.Time {
	d := midnight(t)
	switch unit {
	case "week":
		return d.AddDate(0, 0, -((int(d.Weekday()) + 6) % 7))
	case "month":
		return d.AddDate(0, 0, 1-d.Day())
	case "year":
		return time.Date(d.Year(), 1, 1, 0, 0, 0, 0, d.Location())
	}
	return d
}

// unitNext is the start of the unit after the one starting at start.
func unitNext(unit string, start time.Time) time.Time { return shift(unit, start, 1) }

// dayOfMonth is the day "<month> <day> [year]"; without a year, the latest
// such day up to today.
func dayOfMonth(now time.Time, month, day, year string) (time.Time, time.Time, bool) {
	m := months[month]
	y := now.Year()
	if year != "" {
		var err error
		if y, err = strconv.Atoi(year); err != nil {
			return time.Time{}, time.Time{}, false
		}
	}
	local, ok := ymd(now.Location(), strconv.Itoa(y), strconv.Itoa(int(m)), day)
	if !ok {
		return time.Time{}, time.Time{}, false
	}
	if year == "" && local.After(now) {
		local = local.AddDate(-1, 0, 0)
	}
	return local, local.AddDate(0, 0, 1), true
}
