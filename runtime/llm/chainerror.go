package llm

import (
	"fmt"
	"strings"
)

// Fallback is one entry of a role's chain that did not answer a call: it
// failed, or its provider's circuit was open and it was skipped.
type Fallback struct {
	// Role is the role whose chain it is.
	Role Role
	// Ref is the entry's "<provider>:<model id>".
	Ref string
	// Kind is what sort of failure it was; a skipped entry is transient.
	Kind Kind
	// Reason is the error's text, for the operator (audit, log). It may
	// name the provider's URL or quote its answer: never show it to a
	// customer.
	Reason string
	// To is the entry that answered in the end; empty when none did.
	To string
}

// ChainError is the failure of a call whose role has more than one model
// configured: every entry failed or was skipped. Its text lists each
// entry's failure for the operator.
//
// It unwraps to one error, the decisive one, so that [KindOf], errors.Is
// and errors.As agree: the last entry that failed in a way that may pass
// (transient, rate limited), else the first entry's error. A chain whose
// primary has a refused key but whose backup is only down for a moment is
// a passing failure, worth trying again; a chain where every entry refuses
// the request is not.
type ChainError struct {
	// Role is the role whose chain failed.
	Role Role
	// Entries are the entries tried or skipped, in chain order.
	Entries []Fallback
	errs    []error
}

// Error implements error.
func (e *ChainError) Error() string {
	return fmt.Sprintf("all %d models of role %s failed: %s", len(e.Entries), e.Role, e.summary())
}

// summary lists each entry and its failure.
func (e *ChainError) summary() string {
	parts := make([]string, len(e.Entries))
	for i, f := range e.Entries {
		parts[i] = f.Ref + ": " + f.Reason
	}
	return strings.Join(parts, "; ")
}

// Unwrap returns the decisive error (see [ChainError]).
func (e *ChainError) Unwrap() error {
	if len(e.errs) == 0 {
		return nil
	}
	for i := len(e.errs) - 1; i >= 0; i-- {
		if e.Entries[i].Kind.Retryable() {
			return e.errs[i]
		}
	}
	return e.errs[0]
}

// add records an entry that did not answer.
func (e *ChainError) add(role Role, ref string, err error) {
	e.Entries = append(e.Entries, Fallback{Role: role, Ref: ref, Kind: KindOf(err), Reason: err.Error()})
	e.errs = append(e.errs, err)
}
