package memory

import (
	"cmp"
	"slices"
)

// RRFK is the rank constant of reciprocal rank fusion (Cormack, Clarke and
// Büttcher, 2009): an item at rank r (1-based) of a list earns
// weight/(RRFK+r). 60 is the value of the paper and of most search
// engines; it keeps one list's first place from outweighing agreement
// between lists.
const RRFK = 60

// List is one strategy's ranking, best first.
type List struct {
	// Name labels the strategy ("keyword", "semantic", "temporal",
	// "session"); Fused.Lists reports which lists held an item.
	Name string
	// IDs are the items, best first; a repeated id counts at its first
	// rank only.
	IDs []string
	// Weight scales the list's contributions; 0 means 1.
	Weight float64
	// Admits says whether an item this list ranks enters the results on
	// its own. A list that does not admit only re-ranks items an admitting
	// list found: the session list (the scope's newest items) raises a
	// recent match above an old one, but does not bring back every recent
	// item whatever the query.
	Admits bool
}

// Fused is one item of the fused ranking.
type Fused struct {
	ID    string
	Score float64
	// Lists are the names of the lists that held the item, in the order
	// the lists were given.
	Lists []string
}

// Fuse merges rankings by reciprocal rank fusion and returns at most limit
// items, best first: an item's score is the sum over the lists holding it
// of weight/(RRFK + rank). Items that no admitting list holds are dropped.
// Equal scores are ordered by the item's best rank in any list, then by
// id, so the result is deterministic. A limit of 0 or less returns nothing.
//
// Rank fusion needs no calibration between the strategies' scores (a BM25
// score and a cosine similarity are not comparable) and rewards agreement:
// an item that the keyword and the semantic search both rank second beats
// one that only the keyword search ranks first.
func Fuse(lists []List, limit int) []Fused {
	if limit <= 0 {
		return nil
	}
	type acc struct {
		score    float64
		best     int
		admitted bool
		lists    []string
	}
	byID := make(map[string]*acc)
	var order []string
	for _, l := range lists {
		w := l.Weight
		if w == 0 {
			w = 1
		}
		seen := make(map[string]bool, len(l.IDs))
		for i, id := range l.IDs {
			if seen[id] {
				continue
			}
			seen[id] = true
			a := byID[id]
			if a == nil {
				a = &acc{best: i + 1}
				byID[id] = a
				order = append(order, id)
			}
			a.score += w / float64(RRFK+i+1)
			a.best = min(a.best, i+1)
			a.admitted = a.admitted || l.Admits
			a.lists = append(a.lists, l.Name)
		}
	}
	out := make([]Fused, 0, len(order))
	for _, id := range order {
		if a := byID[id]; a.admitted {
			out = append(out, Fused{ID: id, Score: a.score, Lists: a.lists})
		}
	}
	slices.SortStableFunc(out, func(x, y Fused) int {
		return cmp.Or(cmp.Compare(y.Score, x.Score), cmp.Compare(byID[x.ID].best, byID[y.ID].best), cmp.Compare(x.ID, y.ID))
	})
	return out[:min(limit, len(out))]
}
