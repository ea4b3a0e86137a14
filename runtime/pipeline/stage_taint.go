package pipeline

import (
	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/contextmgr"
	"github.com/silas-ai/silas/runtime/taint"
)

// runTaint classifies the message (spec 5.1 step 2). Owner taint needs the
// message nonce recorded as used first, so that case awaits the nonce store.
func runTaint(t *Turn, e *Env) Effect {
	r := taint.Classify(taint.Input{
		Text: t.In.Text, Nonce: t.In.Nonce, Timestamp: t.In.Timestamp, Signature: t.In.Signature,
		FreshWindow: e.FreshWindow, Authenticated: t.In.Authenticated, Verify: e.VerifySignature,
	}, t.Now)
	t.classification = r
	if r.ConsumeNonce {
		return Effect{Await: &ConsumeNonce{Nonce: t.In.Nonce}}
	}
	t.applyTaint(r)
	return next
}

func resumeTaint(t *Turn, _ *Env, res Result) Effect {
	r := t.classification
	fresh, _ := res.Value.(bool)
	switch {
	case res.Err != nil:
		// Without proof that the nonce is unused the message cannot be
		// owner-tainted: it keeps its channel's taint.
		t.audit("nonce_check_failed", map[string]any{"message_id": t.In.MessageID, "error": res.Err.Error()})
		r = taint.Classify(taint.Input{Authenticated: t.In.Authenticated}, t.Now)
	case !fresh:
		r = r.AsReplay()
	}
	t.applyTaint(r)
	return next
}

func (t *Turn) applyTaint(r taint.Result) {
	t.Taint, t.KeyID = r.Taint, r.KeyID
	if t.Taint == messages.TaintExternal {
		// External text is scrubbed of injection markers at the boundary
		// (spec 5.12), before the chronicle, memory or a model sees it; the
		// input gates of step 1 judged the text as it was sent.
		if s := contextmgr.ScrubInjection(t.In.Text); s != t.In.Text {
			t.In.Text = s
			t.audit("injection_markers_scrubbed", map[string]any{"message_id": t.In.MessageID})
		}
	}
	switch {
	case r.Replay:
		t.audit("replay_attempt", map[string]any{"message_id": t.In.MessageID, "key_id": r.KeyID, "reason": r.Reason})
	case len(t.In.Signature) > 0 && r.Taint != messages.TaintOwner:
		t.audit("signature_invalid", map[string]any{"message_id": t.In.MessageID, "reason": r.Reason})
	}
}
