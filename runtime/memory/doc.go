// Package memory holds the deterministic parts of memory retrieval
// (spec 6.3): the time window a query names ([ParseWindow]: "yesterday",
// "last week", "on Monday", "in March", "2026-03-14", ...) and the fusion
// of the rankings each retrieval strategy produces into one bounded list
// ([Fuse], reciprocal rank fusion).
//
// The retriever itself (actors/scope_memory.go) runs the strategies
// against the store: keyword (BM25 over the keyword index), semantic
// (nearest neighbours of the query's embedding), temporal (items created
// inside the window the query names) and session (the scope's items,
// newest first), and hands their rankings to Fuse. This package takes
// values and returns values: no clock, no store, no goroutines.
package memory
