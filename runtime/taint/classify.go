package taint

import (
	"time"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/keys"
)

// DefaultFreshWindow is how far a signed message's timestamp may be from
// the server's clock, in either direction, when Input.FreshWindow is unset.
const DefaultFreshWindow = 5 * time.Minute

// Input is what step 2 knows about a message.
type Input struct {
	// Text, Nonce and Timestamp are the signed fields exactly as the client
	// sent them (see keys.MessageBytes).
	Text      string
	Nonce     string
	Timestamp string
	// Signature is the client's Ed25519 signature; empty when unsigned.
	Signature []byte
	// FreshWindow bounds |now - Timestamp|; zero or negative means
	// DefaultFreshWindow.
	FreshWindow time.Duration
	// Authenticated is true when the connection has a known channel
	// identity (the web auth token, a verified Telegram chat ID).
	Authenticated bool
	// Verify checks a signature against the owner key and the active owner
	// devices: in the daemon keys.(*Manager).VerifyOwnerSignature, then the
	// current devices.Set. Nil means no key is available, so no signature
	// can be valid.
	Verify func(msg, sig []byte) (keyID string, ok bool)
	// NonceUsed is the nonce store's answer for Nonce. It is consulted only
	// when NeedsNonceCheck is true.
	NonceUsed bool
}

// Result is the classification of one message.
type Result struct {
	// Taint is the message's trust level.
	Taint messages.TaintLevel
	// KeyID identifies the key whose signature verified, also for replays.
	KeyID string
	// ConsumeNonce tells the caller to record Nonce as used (only for
	// owner taint).
	ConsumeNonce bool
	// Replay is true when a valid signature came with a used nonce or a
	// timestamp outside the fresh window; the caller audits it.
	Replay bool
	// Reason says in a few words why, for the audit log.
	Reason string
}

// Reasons, stable for audit queries.
const (
	ReasonOwner             = "valid signature, fresh timestamp, unused nonce"
	ReasonUnsignedAuth      = "unsigned, authenticated channel"
	ReasonUnsignedExternal  = "unsigned, unauthenticated channel"
	ReasonBadSignatureAuth  = "invalid signature, authenticated channel"
	ReasonBadSignature      = "invalid signature, unauthenticated channel"
	ReasonMalformedAuth     = "malformed signed fields, authenticated channel"
	ReasonMalformed         = "malformed signed fields, unauthenticated channel"
	ReasonReplayNonce       = "replay: nonce already used"
	ReasonReplayStale       = "replay: timestamp older than the fresh window"
	ReasonReplayFuture      = "replay: timestamp ahead of the fresh window"
	ReasonReplayConcurrency = "replay: nonce recorded concurrently"
)

// NeedsNonceCheck reports whether Classify will consult in.NonceUsed, so
// that the caller looks the nonce up only then: the message is signed, a key
// is available and its timestamp is well-formed and fresh. It does not
// verify the signature (that is Classify's job, done once).
func NeedsNonceCheck(in Input, now time.Time) bool {
	if len(in.Signature) == 0 || in.Verify == nil || in.Nonce == "" {
		return false
	}
	ts, err := keys.ParseMessageTimestamp(in.Timestamp)
	return err == nil && freshness(ts, now, in.window()) == ""
}

// Classify applies spec 5.1 step 2:
//
//   - A valid signature (owner or enrolled device key) with a fresh
//     timestamp and an unused nonce is owner taint; the caller records the
//     nonce (ConsumeNonce).
//   - A valid signature with a used nonce, or a timestamp outside the fresh
//     window (stale or in the future), is a replay: external taint even on
//     an authenticated connection, because the same bytes may have been
//     captured from another connection.
//   - Otherwise an authenticated connection gives auth taint and anything
//     else external.
//
// An invalid or malformed signature on an authenticated connection still
// gives auth: the connection's identity was established independently (by
// its token), and an attacker who holds that token could simply omit the
// signature to get auth, so downgrading to external would punish a client
// signing bug (a revoked device, a clock mismatch) without stopping anyone.
// It never gives owner.
func Classify(in Input, now time.Time) Result {
	if len(in.Signature) == 0 {
		return fallback(in, ReasonUnsignedAuth, ReasonUnsignedExternal)
	}
	msg, err := keys.MessageBytes(in.Text, in.Timestamp, in.Nonce)
	if err != nil {
		return fallback(in, ReasonMalformedAuth, ReasonMalformed)
	}
	if in.Verify == nil {
		return fallback(in, ReasonBadSignatureAuth, ReasonBadSignature)
	}
	keyID, ok := in.Verify(msg, in.Signature)
	if !ok {
		return fallback(in, ReasonBadSignatureAuth, ReasonBadSignature)
	}
	ts, err := keys.ParseMessageTimestamp(in.Timestamp)
	if err != nil { // unreachable: MessageBytes parsed it already
		return fallback(in, ReasonMalformedAuth, ReasonMalformed)
	}
	if reason := freshness(ts, now, in.window()); reason != "" {
		return replay(keyID, reason)
	}
	if in.NonceUsed {
		return replay(keyID, ReasonReplayNonce)
	}
	return Result{Taint: messages.TaintOwner, KeyID: keyID, ConsumeNonce: true, Reason: ReasonOwner}
}

// AsReplay turns an owner result into the replay result to use when the
// caller could not record the nonce because another turn recorded it first.
func (r Result) AsReplay() Result {
	return replay(r.KeyID, ReasonReplayConcurrency)
}

func (in Input) window() time.Duration {
	if in.FreshWindow <= 0 {
		return DefaultFreshWindow
	}
	return in.FreshWindow
}

// freshness returns "" when ts is within window of now (inclusive), else
// the replay reason.
func freshness(ts, now time.Time, window time.Duration) string {
	switch age := now.Sub(ts); {
	case age > window:
		return ReasonReplayStale
	case age < -window:
		return ReasonReplayFuture
	}
	return ""
}

func fallback(in Input, authReason, externalReason string) Result {
	if in.Authenticated {
		return Result{Taint: messages.TaintAuth, Reason: authReason}
	}
	return Result{Taint: messages.TaintExternal, Reason: externalReason}
}

func replay(keyID, reason string) Result {
	return Result{Taint: messages.TaintExternal, KeyID: keyID, Replay: true, Reason: reason}
}
