// Package pipeline is the turn pipeline of spec 5.1 as one explicit, ordered
// list of stages.
//
// The pipeline is an engine: it never performs IO. A stage that needs the
// outside world (a model call, a nonce lookup, a memory query, the turn's
// commit) returns an Await effect carrying a typed request; the scope actor
// performs the request off its mailbox and hands the result back with
// Resume. Between those two calls the turn is plain data, so a scope can keep
// serving control messages while a turn waits, and every stage can be tested
// without an actor, a model or a disk.
//
// The proxy's tool loop (spec 19.3, stage_route_tools.go) keeps that rule:
// each round is one ModelCall whose answer may be tool calls, each call
// that needs the outside world is one more awaited request, and the loop's
// state (transcript, rounds, limits) is part of the Turn.
package pipeline
