// Package devices is the pure part of owner device keys (spec 5.8, 5.12):
// one-time enrolment codes (generation, normalisation, hashing), parsing and
// naming of device public keys, and Set, an immutable list of active device
// keys that verifies a signed message's canonical bytes (keys.MessageBytes).
//
// Storage lives in persistence (Devices); the daemon keeps the current Set
// and swaps it after every change, so that a revocation applies to the next
// message without a restart.
package devices
