package review

import "errors"

// ErrCard means a card lacks a field of the card contract (spec 0.5.3): a
// programming error at the site that builds it; the card must not go out.
var ErrCard = errors.New("review: incomplete card")

// ErrSlideRequired refuses an approving answer to a high card that does
// not carry the slide confirmation. The owner answers the card again in
// the app, sliding to approve. Nothing ran.
var ErrSlideRequired = errors.New("review: slide confirmation required")

// ErrSecurityKeyRequired refuses an approving answer to an irreversible
// card without a verified WebAuthn assertion. The owner registers a
// security key (or the device's platform authenticator) in the app and
// approves there. Nothing ran.
var ErrSecurityKeyRequired = errors.New("review: security key confirmation required")

// ErrCeremony means a WebAuthn registration or assertion failed
// verification (forged, replayed, for another challenge or another
// origin, or by an unknown credential). The owner tries again from the
// app; the error's text says what failed.
var ErrCeremony = errors.New("review: security key check failed")

// ErrNoCredential means the owner has no security key registered for the
// address the app was opened at: they register one in the app first.
var ErrNoCredential = errors.New("review: no security key registered")

// ErrRelyingParty means the app was opened at an address WebAuthn cannot
// use (an IP address, or an Origin that is not the request's host): the
// owner opens it at a host name such as localhost.
var ErrRelyingParty = errors.New("review: security keys are not available at this address")
