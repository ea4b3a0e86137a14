package actors

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/persistence"
	"github.com/silas-ai/silas/runtime/review"
)

// The server's side of the confirmation ladder (spec 0.5.2). A Connection
// establishes the rung an answer climbed (confirmation): a slide is the
// client's word, a security key is verified here against the challenge
// issued for that very request (ownerapi's POST /webauthn/approve/options)
// and a credential the owner registered. Whoever owns the card then
// compares that rung with the card's risk (refuseRung) before anything
// runs. A refused answer leaves the card pending, is audited, and tells
// the owner what to do.

// confirmationChecked carries the outcome of a security key check.
// Sender: a Connection's IO goroutine. Receiver: that Connection, which
// forwards the answer (confirmed) or refuses it (err).
type confirmationChecked struct {
	frame *messages.Frame
	key   string // the name of the key that signed
	err   error
}

// declines reports whether f answers its card without approving anything,
// which needs no rung.
func declines(f *messages.Frame) bool {
	switch f.Type {
	case messages.TypeApprovalResponse:
		return !messages.ApprovalVerdict(f.Verdict).Approves()
	case messages.TypePermissionEscalationResponse:
		return f.Verdict == permissionDeny
	case messages.TypeConnectionFailureResponse:
		return f.SelectedAction == "skip"
	}
	return true
}

// confirmation decodes f's confirmation and returns the rung it
// establishes now ("" for a tap, or ConfirmSlide). A security key
// assertion is verified off the mailbox: the frame comes back as
// confirmationChecked and ok is false, as it is when f was refused.
func (c *Connection) confirmation(ctx actor.Context, f *messages.Frame) (confirmed string, ok bool) {
	if len(f.Confirmation) == 0 || declines(f) {
		return "", true
	}
	var conf messages.Confirmation
	dec := json.NewDecoder(bytes.NewReader(f.Confirmation))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&conf); err != nil {
		c.out.Send(webError(messages.CodeBadRequest, "confirmation must be {\"method\":\"slide\"} or {\"method\":\"webauthn\",\"assertion\":...}: "+err.Error(), f.Type))
		return "", false
	}
	if err := conf.Validate(); err != nil {
		c.out.Send(webError(messages.CodeBadRequest, err.Error(), f.Type))
		return "", false
	}
	if conf.Method == messages.ConfirmSlide {
		return messages.ConfirmSlide, true
	}
	self, root, db, owner, now := ctx.Self(), c.d.sys.Root, c.d.DB, c.d.Config.OwnerID, c.d.now
	reply := func(key string, err error) { root.Send(self, &confirmationChecked{frame: f, key: key, err: err}) }
	if db == nil {
		reply("", fmt.Errorf("%w: this process keeps no security keys", review.ErrNoCredential))
		return "", false
	}
	if !c.d.tasks.Go("verify security key", func(ctx context.Context) {
		reply(verifyAssertion(ctx, db, owner, f.RequestID, conf.Assertion, now()))
	}, func(err error) { reply("", err) }) {
		reply("", errShuttingDown)
	}
	return "", false
}

// verifyAssertion checks assertion against the challenge issued for
// request and the owner's credentials, spends the challenge, and records
// the key's new sign count. It returns the name of the key that signed.
func verifyAssertion(ctx context.Context, db *persistence.DB, owner, request string, assertion []byte, now time.Time) (string, error) {
	store := db.WebAuthn()
	cer, err := store.TakeCeremony(ctx, persistence.CeremonyApprove, request, now)
	switch {
	case errors.Is(err, persistence.ErrNotFound), errors.Is(err, persistence.ErrInvalid):
		return "", fmt.Errorf("%w: no security key challenge is pending for this card (it expired, or an earlier answer used it); approve the card again in the app for a new one", review.ErrCeremony)
	case err != nil:
		return "", fmt.Errorf("read the security key challenge: %w", err)
	}
	list, err := store.Credentials(ctx)
	if err != nil {
		return "", fmt.Errorf("read the security keys: %w", err)
	}
	got, err := review.VerifyAssertion(review.Session(cer.Session), owner, reviewCredentials(list), assertion)
	if err != nil {
		return "", err
	}
	switch err := store.UseCredential(ctx, got.ID, got.Record, now); {
	case errors.Is(err, persistence.ErrNotFound):
		return "", fmt.Errorf("%w: the key that signed was removed meanwhile", review.ErrCeremony)
	case err != nil:
		return "", fmt.Errorf("record the security key's use: %w", err)
	}
	return got.Name, nil
}

// reviewCredentials converts stored credentials for runtime/review.
func reviewCredentials(list []persistence.WebAuthnCredential) []review.Credential {
	out := make([]review.Credential, 0, len(list))
	for _, c := range list {
		out = append(out, review.Credential{ID: c.ID, RPID: c.RPID, Name: c.Name, AddedAt: c.AddedAt, Record: c.Record})
	}
	return out
}

// onConfirmationChecked forwards an answer whose security key was
// verified, or refuses it.
func (c *Connection) onConfirmationChecked(ctx actor.Context, m *confirmationChecked) {
	f := m.frame
	if m.err != nil {
		auditFrom(c.d, "approval_refused", map[string]any{"request_id": f.RequestID, "request_type": f.Type,
			"confirmation": messages.ConfirmWebAuthn, "reason": m.err.Error()})
		c.out.Send(webError(messages.CodeConfirmationRequired, "request_id "+quote(f.RequestID)+": "+m.err.Error()+". Nothing ran", f.Type))
		return
	}
	auditFrom(c.d, "approval_confirmed", map[string]any{"request_id": f.RequestID, "request_type": f.Type, "confirmation": messages.ConfirmWebAuthn, "key": m.key})
	c.forwardAnswer(ctx, f, messages.ConfirmWebAuthn)
}

// forwardAnswer hands a checked answer to whoever owns its card.
func (c *Connection) forwardAnswer(ctx actor.Context, f *messages.Frame, confirmed string) {
	switch f.Type {
	case messages.TypeApprovalResponse:
		if c.scope == nil {
			c.out.Send(webError(messages.CodeBadRequest, "no approval is pending on this connection yet; wait for an approval_request", f.Type))
			return
		}
		ctx.Send(c.scope, &messages.ApprovalResponse{RequestID: f.RequestID, Verdict: messages.ApprovalVerdict(f.Verdict), Confirmed: confirmed, Sink: c.out})
	default:
		ctx.Send(c.d.connections, &ConnectionCardAnswer{RequestID: f.RequestID, Type: f.Type, Action: f.Action, SelectedAction: f.SelectedAction,
			Verdict: f.Verdict, Confirmed: confirmed, Sink: c.out})
	}
}

// refuseRung reports whether an approving answer to a card of risk
// skipped a rung of the ladder. When it did, the refusal is audited and
// the answering connection told what to do; the caller leaves the card
// pending and runs nothing.
func refuseRung(d *shared, sink messages.Sink, requestType, requestID, risk, confirmed string) bool {
	err := review.Check(review.Risk(risk), confirmed)
	if err == nil {
		return false
	}
	auditFrom(d, "approval_refused", map[string]any{"request_id": requestID, "request_type": requestType, "risk_level": risk,
		"confirmation": confirmedRung(confirmed), "reason": err.Error()})
	send(sink, webError(messages.CodeConfirmationRequired, "request_id "+quote(requestID)+": "+err.Error(), requestType))
	return true
}

// confirmedRung names the rung an answer climbed, for the audit log.
func confirmedRung(confirmed string) string {
	if confirmed == "" {
		return review.RungTap
	}
	return confirmed
}
