// Package devices is the pure part of owner device keys (spec 5.8, 5.12):
// one-time enrolment codes (generation, normalisation, hashing), parsing and
// naming of device public keys, and Set, an immutable list of active device
// keys that verifies a signed message's canonical bytes (keys.MessageBytes).
//
// This package and persistence.Devices are the only device registry: a
// device is enrolled, listed and revoked through persistence.Devices (by
// the daemon; the CLI goes through its HTTP API) and verified through a
// Set. keys.Manager knows only the owner key. The daemon keeps the current
// Set and swaps it after every change, so that a revocation applies to the
// next message without a restart.
//
// A device key vouches for chat messages only (owner taint). Approval
// tokens are signed by the daemon with the owner key once the owner
// approves (spec 5.11), so the approval engine never consults a Set.
package devices
