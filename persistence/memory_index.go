package persistence

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"unicode"

	"github.com/dgraph-io/badger/v4"
	"github.com/kljensen/snowball/english"

	"github.com/silas-ai/silas/messages"
)

// Keyword index with BM25 ranking. Each memory item's Content and
// SemanticTags are split into lower-case word tokens (maximal runs of
// Unicode letters and digits, at most maxTermLen bytes; longer runs are
// cut) reduced to their English stem. The index of one scope is:
//
//	mi/<scope>\0<term>\0<newest><id>  posting, newest first per term (keys.go),
//	                                 15 bytes: flag (1 = low_reingestion),
//	                                 created unix nanos (8 BE), term frequency
//	                                 (2 BE), item length in tokens (4 BE)
//	mdf/<scope>\0<term>              document frequency: items holding term (4 BE)
//	mst/<scope>\0                    items indexed (8 BE) and their total length (8 BE)
//
// All three are written in the transaction that writes the item, so
// Search reads N, df and the average length without scanning the scope.
// Everything here is derived from the mem/ records: Memory.Reindex and the
// migrations rebuild it.

// BM25 parameters (Robertson/Sparck Jones, the usual defaults).
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// maxTermLen caps a term's length in bytes.
const maxTermLen = 64

// postingLen is the size of a posting value.
const postingLen = 15

// DefaultSearchLimit is the number of results when SearchOptions.Limit is 0.
const DefaultSearchLimit = 10

// SearchOptions tune Memory.Search.
type SearchOptions struct {
	// Limit caps the results; 0 means DefaultSearchLimit.
	Limit int
}

// ScoredMemory is one search hit.
type ScoredMemory struct {
	Item  messages.MemoryItem
	Score float64
}

// tokens returns the index tokens of the given texts in order, repeats
// kept: words lower-cased and reduced to their English stem
// (Snowball/Porter2), so that "cats" finds "cat" and "running" finds
// "runs". Stop words are kept, since idf already gives them little weight.
func tokens(texts ...string) []string {
	var out []string
	for _, t := range texts {
		for _, w := range strings.FieldsFunc(strings.ToLower(t), func(r rune) bool {
			return !unicode.IsLetter(r) && !unicode.IsDigit(r)
		}) {
			w = english.Stem(w, true)
			if len(w) > maxTermLen {
				w = strings.ToValidUTF8(w[:maxTermLen], "")
			}
			if w != "" {
				out = append(out, w)
			}
		}
	}
	return out
}

// terms returns the distinct index terms of the given texts, sorted.
func terms(texts ...string) []string {
	out := tokens(texts...)
	slices.Sort(out)
	return slices.Compact(out)
}

// termFreq is one distinct term of an item and how often it occurs.
type termFreq struct {
	term string
	tf   int
}

// docTerms is what an item contributes to the index.
type docTerms struct {
	terms  []termFreq // sorted by term
	length int        // tokens, repeats counted
}

// memoryTerms returns the index terms of m. The raw low_reingestion lane
// (every message and answer of every turn) is not keyword-indexed: it is
// reintroduced only by replay, export or by time (Recent), and indexing it
// would make each turn write dozens of index keys that retrieval never
// reads (spec 6.5: never auto-injected). So raw ingest costs no index
// write at all.
func memoryTerms(m *messages.MemoryItem) docTerms {
	if m.ReingestionTier == messages.TierLowReingestion {
		return docTerms{}
	}
	toks := tokens(append([]string{m.Content}, m.SemanticTags...)...)
	slices.Sort(toks)
	d := docTerms{length: len(toks)}
	for i := 0; i < len(toks); {
		j := i + 1
		for j < len(toks) && toks[j] == toks[i] {
			j++
		}
		d.terms = append(d.terms, termFreq{term: toks[i], tf: j - i})
		i = j
	}
	return d
}

// KeywordIndexed reports whether storing m writes keyword index entries,
// that is whether Search can ever find it. Callers that skip a search of a
// scope known to hold no indexed item use it to notice the write that ends
// that knowledge.
func KeywordIndexed(m *messages.MemoryItem) bool {
	return len(memoryTerms(m).terms) > 0
}

func postingValue(m *messages.MemoryItem, tf, length int) []byte {
	v := make([]byte, 1, postingLen)
	if m.ReingestionTier == messages.TierLowReingestion {
		v[0] = 1
	}
	v = binary.BigEndian.AppendUint64(v, uint64(m.CreatedAt.UnixNano()))
	v = binary.BigEndian.AppendUint16(v, uint16(min(tf, math.MaxUint16)))
	return binary.BigEndian.AppendUint32(v, uint32(min(length, math.MaxUint32)))
}

// postingOverhead estimates a posting key's fixed part and value, with its
// share of the document frequency key.
const postingOverhead = 64

// kv is the part of a Badger transaction the index code needs: the group
// committer's wtxn, and a migration's plain transaction.
type kv interface {
	getter
	Set(key, val []byte) error
	Delete(key []byte) error
}

// indexMemory writes the posting and recency keys of m, whose terms are
// d, and counts it in c for the document frequencies and the scope's
// totals (indexCounts.apply writes those).
func indexMemory(txn kv, scope string, m *messages.MemoryItem, d docTerms, c *indexCounts) error {
	for _, t := range d.terms {
		if err := txn.Set(postingKey(scope, t.term, m.CreatedAt.UnixNano(), m.MemoryID), postingValue(m, t.tf, d.length)); err != nil {
			return err
		}
	}
	c.add(scope, d, 1)
	return txn.Set(memoryTimeKey(scope, m.CreatedAt.UnixNano(), m.MemoryID), nil)
}

// unindexMemory deletes the posting and recency keys of m and takes it out
// of the frequencies and totals in c.
func unindexMemory(txn kv, scope string, m *messages.MemoryItem, c *indexCounts) error {
	d := memoryTerms(m)
	for _, t := range d.terms {
		if err := txn.Delete(postingKey(scope, t.term, m.CreatedAt.UnixNano(), m.MemoryID)); err != nil {
			return err
		}
	}
	c.add(scope, d, -1)
	return txn.Delete(memoryTimeKey(scope, m.CreatedAt.UnixNano(), m.MemoryID))
}

// indexCounts gathers the changes to the document frequencies and scope
// totals of the items one staging function indexes and unindexes, so that
// each counter is read and written once per write rather than once per
// item: a turn whose eviction stores hundreds of episodes sharing their
// words writes each word's count once, which keeps the turn's one atomic
// commit far from Badger's transaction limits.
type indexCounts struct {
	df    map[scopeTerm]int64
	stats map[string]*[2]int64 // scope -> items, total length
}

type scopeTerm struct{ scope, term string }

func newIndexCounts() *indexCounts {
	return &indexCounts{df: map[scopeTerm]int64{}, stats: map[string]*[2]int64{}}
}

// add counts an item with terms d in scope, sign +1 when indexed and -1
// when unindexed. Items without terms count nowhere.
func (c *indexCounts) add(scope string, d docTerms, sign int64) {
	if len(d.terms) == 0 {
		return
	}
	for _, t := range d.terms {
		c.df[scopeTerm{scope, t.term}] += sign
	}
	st := c.stats[scope]
	if st == nil {
		st = new([2]int64)
		c.stats[scope] = st
	}
	st[0] += sign
	st[1] += sign * int64(d.length)
}

// apply writes the gathered changes, in key order.
func (c *indexCounts) apply(txn kv) error {
	keys := make([]scopeTerm, 0, len(c.df))
	for k, delta := range c.df {
		if delta != 0 {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b scopeTerm) int {
		return cmp.Or(strings.Compare(a.scope, b.scope), strings.Compare(a.term, b.term))
	})
	for _, k := range keys {
		if err := addDocFreq(txn, k.scope, k.term, c.df[k]); err != nil {
			return err
		}
	}
	scopes := slices.Sorted(maps.Keys(c.stats))
	for _, scope := range scopes {
		if st := c.stats[scope]; st[0] != 0 || st[1] != 0 {
			if err := addMemStats(txn, scope, st[0], st[1]); err != nil {
				return err
			}
		}
	}
	clear(c.df)
	clear(c.stats)
	return nil
}

// getter is the read side of a transaction.
type getter interface {
	Get(key []byte) (*badger.Item, error)
}

// readCount reads the 4-byte big-endian count at key; a missing key is 0.
func readCount(txn getter, key []byte) (uint64, error) {
	v, err := readCounterValue(txn, key, 4)
	if err != nil || v == nil {
		return 0, err
	}
	return uint64(binary.BigEndian.Uint32(v)), nil
}

// readTotals reads the two 8-byte big-endian totals at key; a missing key
// is 0, 0.
func readTotals(txn getter, key []byte) (docs, length uint64, err error) {
	v, err := readCounterValue(txn, key, 16)
	if err != nil || v == nil {
		return 0, 0, err
	}
	return binary.BigEndian.Uint64(v), binary.BigEndian.Uint64(v[8:]), nil
}

// readCounterValue returns the value at key, which must be size bytes, or
// nil when the key is missing. The small buffer stays on the caller's
// stack in the common case.
func readCounterValue(txn getter, key []byte, size int) ([]byte, error) {
	item, err := txn.Get(key)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var buf [16]byte
	v, err := item.ValueCopy(buf[:0])
	if err != nil {
		return nil, err
	}
	if len(v) != size {
		return nil, fmt.Errorf("index counter %x: %d bytes, want %d: %w", key, len(v), size, ErrCorrupt)
	}
	return v, nil
}

// addDocFreq adds delta to the document frequency of term; a count that
// reaches zero is deleted.
func addDocFreq(txn kv, scope, term string, delta int64) error {
	k := docFreqKey(scope, term)
	c, err := readCount(txn, k)
	if err != nil {
		return err
	}
	n := max(int64(c)+delta, 0)
	if n == 0 {
		return txn.Delete(k)
	}
	return txn.Set(k, binary.BigEndian.AppendUint32(nil, uint32(n)))
}

// addMemStats adds to the scope's indexed item count and total length.
func addMemStats(txn kv, scope string, docs, length int64) error {
	k := scopePrefix(pfxMemStats, scope)
	d, l, err := readTotals(txn, k)
	if err != nil {
		return err
	}
	nd, nl := max(int64(d)+docs, 0), max(int64(l)+length, 0)
	if nd == 0 {
		return txn.Delete(k)
	}
	v := binary.BigEndian.AppendUint64(nil, uint64(nd))
	return txn.Set(k, binary.BigEndian.AppendUint64(v, uint64(nl)))
}

type hit struct {
	id      string
	score   float64
	created int64
}

// Search bounds. A turn's auto-retrieval searches with the user's message,
// whose common words ("hello", "question", the customer's name) occur in
// nearly every item of a long conversation's memory; reading their whole
// posting lists would make every turn cost more than the last. Search
// therefore takes the query's terms rarest first, at most maxQueryTerms of
// them, and reads at most maxTermPostings postings of each, the newest
// (postings are kept newest first, keys.go), and at most maxSearchPostings
// in all. Rare terms, which decide a BM25 ranking, are read whole; an item
// beyond the newest postings of a common term only misses that term's
// small share of its score.
const (
	maxQueryTerms     = 32
	maxTermPostings   = 64
	maxSearchPostings = 256
)

// Search returns scope's items that contain any word of query, best first,
// ranked by BM25 (k1 = 1.2, b = 0.75): an item's score is the sum, over the
// distinct query terms it contains, of
//
//	idf * tf*(k1+1) / (tf + k1*(1 - b + b*len/avglen))
//	idf = ln(1 + (N - df + 0.5) / (df + 0.5))
//
// where tf is how often the term occurs in the item, len the item's length
// in tokens, N the number of indexed items of the scope, df how many hold
// the term and avglen their average length. Equal scores put the newest
// item first. Its cost is bounded whatever the size of the scope's memory:
// see maxQueryTerms and maxTermPostings.
func (mem Memory) Search(ctx context.Context, scope, query string, opts SearchOptions) ([]ScoredMemory, error) {
	out, _, err := mem.search(ctx, scope, query, opts)
	return out, err
}

// search is Search, also returning how many postings it read.
func (mem Memory) search(ctx context.Context, scope, query string, opts SearchOptions) ([]ScoredMemory, int, error) {
	if err := validID("scope", scope); err != nil {
		return nil, 0, fmt.Errorf("search memory: %w", err)
	}
	if opts.Limit < 0 {
		return nil, 0, fmt.Errorf("search memory %s: limit %d: %w", scope, opts.Limit, ErrInvalid)
	}
	limit := cmp.Or(opts.Limit, DefaultSearchLimit)
	qterms := terms(query)
	if len(qterms) == 0 {
		return nil, 0, nil
	}
	var out []ScoredMemory
	read := 0
	err := mem.d.view(ctx, func(txn *badger.Txn) error {
		out, read = out[:0], 0
		// Most scopes (every chatbot customer) hold no indexed memory at
		// all: one read answers that, before any term is looked at.
		docs, length, err := readTotals(txn, scopePrefix(pfxMemStats, scope))
		if err != nil || docs == 0 {
			return err
		}
		n, avg := float64(docs), float64(length)/float64(docs)
		if avg <= 0 {
			avg = 1
		}
		type qterm struct {
			term string
			df   uint64
		}
		var qs []qterm
		for _, t := range qterms {
			df, err := readCount(txn, docFreqKey(scope, t))
			if err != nil {
				return err
			}
			if df > 0 {
				qs = append(qs, qterm{t, df})
			}
		}
		slices.SortStableFunc(qs, func(a, b qterm) int { return cmp.Compare(a.df, b.df) })
		qs = qs[:min(len(qs), maxQueryTerms)]
		hits := map[string]*hit{}
		// One iterator over the scope's postings, positioned on each term
		// in turn: values are 15 bytes kept in the LSM tree, so they are
		// read in place rather than prefetched.
		it := txn.NewIterator(badger.IteratorOptions{Prefix: scopePrefix(pfxPosting, scope)})
		defer it.Close()
		for _, q := range qs {
			df := float64(q.df)
			idf := math.Log1p((n - df + 0.5) / (df + 0.5))
			p := postingPrefix(scope, q.term)
			taken, limit := 0, min(maxTermPostings, maxSearchPostings-read)
			for it.Seek(p); it.ValidForPrefix(p) && taken < limit; it.Next() {
				taken++
				item := it.Item()
				key := item.Key()
				if len(key) <= len(p)+8 {
					return fmt.Errorf("posting key %x: %w", key, ErrCorrupt)
				}
				var buf [postingLen]byte
				v, err := item.ValueCopy(buf[:0])
				if err != nil {
					return err
				}
				if len(v) != postingLen {
					return fmt.Errorf("posting %x: %d bytes: %w", key, len(v), ErrCorrupt)
				}
				if v[0] == 1 { // the raw lane is never indexed; skip a stray posting
					continue
				}
				tf := float64(binary.BigEndian.Uint16(v[9:]))
				dl := float64(binary.BigEndian.Uint32(v[11:]))
				id := key[len(p)+8:]
				h := hits[string(id)] // a lookup by bytes allocates nothing
				if h == nil {
					h = &hit{id: string(id), created: int64(binary.BigEndian.Uint64(v[1:]))}
					hits[h.id] = h
				}
				h.score += idf * tf * (bm25K1 + 1) / (tf + bm25K1*(1-bm25B+bm25B*dl/avg))
			}
			read += taken
		}
		ranked := make([]*hit, 0, len(hits))
		for _, h := range hits {
			ranked = append(ranked, h)
		}
		slices.SortFunc(ranked, func(a, b *hit) int {
			return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(b.created, a.created), strings.Compare(a.id, b.id))
		})
		for _, h := range ranked[:min(limit, len(ranked))] {
			m, err := loadMemory(txn, scope, h.id)
			if err != nil {
				return fmt.Errorf("memory %s from index: %w", h.id, err)
			}
			out = append(out, ScoredMemory{Item: m, Score: h.score})
		}
		return nil
	})
	if err != nil {
		return nil, 0, fmt.Errorf("search memory %s: %w", scope, err)
	}
	return out, read, nil
}

// HasKeywordIndex reports whether scope holds any keyword-indexed item,
// from the scope's totals (one read). When it is false, Search of scope
// returns nothing until an indexed item is stored (KeywordIndexed).
func (mem Memory) HasKeywordIndex(ctx context.Context, scope string) (bool, error) {
	if err := validID("scope", scope); err != nil {
		return false, fmt.Errorf("memory index totals: %w", err)
	}
	var docs uint64
	err := mem.d.view(ctx, func(txn *badger.Txn) error {
		var err error
		docs, _, err = readTotals(txn, scopePrefix(pfxMemStats, scope))
		return err
	})
	if err != nil {
		return false, fmt.Errorf("memory index totals of %s: %w", scope, err)
	}
	return docs > 0, nil
}

// countKeys counts the keys under prefix without reading values.
func countKeys(ctx context.Context, txn *badger.Txn, prefix []byte) (int, error) {
	it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
	defer it.Close()
	n := 0
	for it.Rewind(); it.Valid(); it.Next() {
		if n%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return 0, err
			}
		}
		n++
	}
	return n, nil
}
