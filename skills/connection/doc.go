// Package connection runs connection skills' scripts (spec 5.10, 10.6):
// each in a fresh sandbox instance with network access, the approved copy
// of the skill read-only, and exactly one connection's credential as a
// file in the work dir, named by the connection's keystore ref_id. It
// speaks the NDJSON protocol of spec 5.10.1 over the process's standard
// input and output: lines are bounded, stderr is never parsed, and a line
// that carries the credential is never passed on (the run is stopped).
//
// The package holds no state between runs; the ConnectionManager actor
// decides what runs when. docs/connections.md is the script contract.
package connection
