package guardrails

import (
	"regexp/syntax"
	"strings"
)

// Literal prefilter. Every message of every turn passes the jailbreak
// heuristics, and almost none of them matches any pattern, so most of the
// detector's time went into regular expressions proving a negative. Each
// pattern therefore carries a set of literals, at least one of which occurs
// in every text the pattern matches; a text containing none of them cannot
// match and the expression is not run. The sets are derived from the
// parsed expressions, so they stay correct when a pattern changes.

// requiredLiterals returns literals such that every match of expr contains
// at least one of them, or nil when no such set is known (the pattern must
// always run).
func requiredLiterals(expr string) []string {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil
	}
	lits, ok := literalsOf(re.Simplify())
	if !ok {
		return nil
	}
	return lits
}

// literalsOf is requiredLiterals over a parsed expression.
func literalsOf(re *syntax.Regexp) ([]string, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 || len(re.Rune) == 0 {
			return nil, false
		}
		return []string{string(re.Rune)}, true
	case syntax.OpCapture:
		return literalsOf(re.Sub[0])
	case syntax.OpPlus:
		return literalsOf(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min < 1 {
			return nil, false
		}
		return literalsOf(re.Sub[0])
	case syntax.OpAlternate:
		var all []string
		for _, sub := range re.Sub {
			lits, ok := literalsOf(sub)
			if !ok {
				return nil, false
			}
			all = append(all, lits...)
		}
		return all, true
	case syntax.OpConcat:
		// Any required part will do; the one with the longest shortest
		// literal rejects the most texts.
		var best []string
		found := false
		for _, sub := range re.Sub {
			lits, ok := literalsOf(sub)
			if ok && (!found || better(lits, best)) {
				best, found = lits, true
			}
		}
		return best, found
	}
	// Character classes, optional parts, anchors and empty matches
	// require no particular literal.
	return nil, false
}

// better reports whether literal set a is a stronger filter than b.
func better(a, b []string) bool {
	ma, mb := shortest(a), shortest(b)
	if ma != mb {
		return ma > mb
	}
	return len(a) < len(b)
}

func shortest(lits []string) int {
	n := -1
	for _, l := range lits {
		if n < 0 || len(l) < n {
			n = len(l)
		}
	}
	return n
}

// mayMatch reports whether text contains one of lits; a nil set always
// may.
func mayMatch(text string, lits []string) bool {
	if lits == nil {
		return true
	}
	for _, l := range lits {
		if strings.Contains(text, l) {
			return true
		}
	}
	return false
}

// maySpell reports whether text may hold a run of four or more single
// letters separated by single spaces ("i g n o r e"), the only texts the
// detector's join step changes.
func maySpell(text string) bool {
	for i := 0; i+6 < len(text); i++ {
		if isLower(text[i]) && text[i+1] == ' ' && isLower(text[i+2]) && text[i+3] == ' ' &&
			isLower(text[i+4]) && text[i+5] == ' ' && isLower(text[i+6]) {
			return true
		}
	}
	return false
}

func isLower(b byte) bool { return b >= 'a' && b <= 'z' }
