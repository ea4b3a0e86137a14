package messages

import (
	"encoding/json"
	"fmt"
)

// Confirmation methods: the rungs of the risk ladder (spec 0.5.2) an
// approving answer can carry beyond its tap.
const (
	// ConfirmSlide says the owner slid the card's slider home (or, in a
	// terminal, typed the answer in full): a deliberate second gesture,
	// which a high card needs. The server takes the client's word for it.
	ConfirmSlide = "slide"
	// ConfirmWebAuthn carries a WebAuthn assertion, signed by a security
	// key or platform authenticator the owner registered, over the
	// challenge the server issued for this very request. An irreversible
	// card needs it; the server verifies it before the answer counts.
	ConfirmWebAuthn = "webauthn"
)

// maxAssertionBytes bounds the assertion a confirmation carries; a real
// one is well under 2 KiB.
const maxAssertionBytes = 16 << 10

// Confirmation is the "confirmation" object of an answer frame
// (approval_response, permission_escalation_response,
// connection_failure_response): {"method":"slide"} or
// {"method":"webauthn","assertion":<PublicKeyCredential JSON>}.
type Confirmation struct {
	Method string `json:"method"`
	// Assertion is the PublicKeyCredential of navigator.credentials.get,
	// as JSON (id, rawId, type, response{clientDataJSON,
	// authenticatorData, signature, userHandle}), base64url fields.
	Assertion json.RawMessage `json:"assertion,omitempty"`
}

// Validate checks the shape of a confirmation: a known method, and an
// assertion with webauthn only.
func (c *Confirmation) Validate() error {
	switch c.Method {
	case ConfirmSlide:
		if len(c.Assertion) != 0 {
			return fmt.Errorf("confirmation: method %q carries no assertion; send {\"method\":\"webauthn\",\"assertion\":...} for a security key", ConfirmSlide)
		}
	case ConfirmWebAuthn:
		if len(c.Assertion) == 0 || string(c.Assertion) == "null" {
			return fmt.Errorf("confirmation: method %q needs the assertion of navigator.credentials.get", ConfirmWebAuthn)
		}
		if len(c.Assertion) > maxAssertionBytes {
			return fmt.Errorf("confirmation: the assertion is %d bytes; the limit is %d", len(c.Assertion), maxAssertionBytes)
		}
	default:
		return fmt.Errorf("confirmation: method %q: want %q or %q", c.Method, ConfirmSlide, ConfirmWebAuthn)
	}
	return nil
}
