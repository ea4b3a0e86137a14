package actors

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/skills"
)

// The incremental permission model of spec 5.10.2: the connection_permission
// policy check before a connection skill's script runs, and the escalation
// card when the call needs more than the connection was granted.

// Verdicts of a permission escalation card.
const (
	permissionApprove      = "approve"
	permissionJustOnce     = "just_this_once"
	permissionDeny         = "deny"
	requiredPermissionsKey = "required_permissions"
)

// permissionNeed is what one script call needs of its connection: a Silas
// tier and the service scopes its skill declares for the script
// (metadata.required_permissions in SKILL.md).
type permissionNeed struct {
	tier   messages.ConnectionPermission
	scopes []string
}

// needOf derives the need of a call: the HTTP method argument decides the
// tier (GET and HEAD observe, any other method acts), and the skill's
// metadata.required_permissions lists service scopes per script.
func needOf(sk *skills.Skill, inv skills.Invocation) permissionNeed {
	need := permissionNeed{tier: messages.PermissionObserve}
	for _, a := range inv.Args {
		if m, ok := strings.CutPrefix(a, "--method="); ok && m != "GET" && m != "HEAD" {
			need.tier = messages.PermissionAct
		}
	}
	if req, ok := sk.Metadata[requiredPermissionsKey].(map[string]any); ok {
		if list, ok := req[inv.Script].([]any); ok {
			for _, v := range list {
				if s, ok := v.(string); ok {
					need.scopes = append(need.scopes, s)
				}
			}
		}
	}
	return need
}

// missing returns what conn lacks of need.
func (n permissionNeed) missing(conn messages.Connection) (tier messages.ConnectionPermission, scopes []string) {
	if !hasTier(conn.Permissions, n.tier) {
		tier = n.tier
	}
	for _, s := range n.scopes {
		if !slices.Contains(conn.PermissionsGranted, s) {
			scopes = append(scopes, s)
		}
	}
	return tier, scopes
}

// tierRank orders the tiers: a connection granted act may also draft and
// observe.
var tierRank = map[messages.ConnectionPermission]int{
	messages.PermissionObserve: 0, messages.PermissionDraft: 1, messages.PermissionAct: 2, messages.PermissionManage: 3,
}

func hasTier(granted []messages.ConnectionPermission, want messages.ConnectionPermission) bool {
	for _, g := range granted {
		if tierRank[g] >= tierRank[want] {
			return true
		}
	}
	return false
}

// permissionAsk asks a connection's owner for more access on behalf of a
// running script call. Sender: an attempt's tool goroutine, which waits
// on reply (with the approval timeout). Receiver: the ConnectionManager,
// then the connection.
type permissionAsk struct {
	connID string
	tier   messages.ConnectionPermission
	scopes []string
	reason string
	reply  chan permissionVerdict // buffered, one value
}

// permissionVerdict is the owner's answer to a permissionAsk.
type permissionVerdict struct {
	allowed bool
	detail  string
}

// pendingAsk is an escalation card on show.
type pendingAsk struct {
	ask  *permissionAsk
	card string
	risk string // the card's risk level, which an approving answer must meet
}

// onPermissionAsk shows the escalation card.
func (s *ServiceConnection) onPermissionAsk(c actor.Context, a *permissionAsk) {
	if s.rec.Status != messages.ConnectionActive || s.removing != nil {
		a.reply <- permissionVerdict{detail: fmt.Sprintf("connection %s is %s", s.rec.Name, s.rec.Status)}
		return
	}
	card := newCardID()
	s.asks = append(s.asks, pendingAsk{ask: a, card: card})
	requested := slices.Clone(a.scopes)
	if a.tier != "" {
		requested = append([]string{string(a.tier)}, requested...)
	}
	current := make([]string, 0, len(s.rec.Permissions)+len(s.rec.PermissionsGranted))
	for _, p := range s.rec.Permissions {
		current = append(current, string(p))
	}
	current = append(current, s.rec.PermissionsGranted...)
	// Widening within what Silas may do is medium; a new kind of access
	// (acting, managing, or new service scopes) is high.
	risk := permissionRisk(a.tier, a.scopes)
	s.asks[len(s.asks)-1].risk = string(risk)
	s.audit("permission_escalation_requested", map[string]any{"tier": string(a.tier), "scopes": a.scopes, "reason": a.reason})
	ev := &messages.PermissionEscalationEvent{
		Type: messages.EventPermissionEscalation, RequestID: card, ConnectionID: s.rec.ConnectionID, ConnectionName: s.rec.Name,
		CurrentPermissions: current, RequestedPermissions: requested, Reason: a.reason, RiskLevel: string(risk),
		ExpiresAt: s.d.now().Add(s.approvalTimeout()),
	}
	ev.Card = permissionContract(s.d.Log, ev, risk)
	s.openCard(c, card, ev)
}

// onPermissionAnswer carries out the owner's verdict.
func (s *ServiceConnection) onPermissionAnswer(c actor.Context, a *ConnectionCardAnswer) bool {
	i := slices.IndexFunc(s.asks, func(p pendingAsk) bool { return p.card == a.RequestID })
	if i < 0 {
		return false
	}
	p := s.asks[i]
	if a.Verdict != permissionDeny && refuseRung(s.d, a.Sink, a.Type, a.RequestID, p.risk, a.Confirmed) {
		return true // the card stays pending: answer it again with its rung
	}
	s.asks = slices.Delete(s.asks, i, i+1)
	s.closeCard(c, p.card)
	switch a.Verdict {
	case permissionApprove:
		s.audit("permission_escalation_approved", map[string]any{"tier": string(p.ask.tier), "scopes": p.ask.scopes})
		if p.ask.tier != "" && !hasTier(s.rec.Permissions, p.ask.tier) {
			s.rec.Permissions = append(s.rec.Permissions, p.ask.tier)
			s.changed(c)
		}
		if len(p.ask.scopes) > 0 {
			// New service scopes need a new authorization: the re-auth
			// runs setup.py with incremental_scopes; this call cannot wait
			// for it.
			s.scopes = slices.Clone(p.ask.scopes)
			s.approveSetup(c)
			p.ask.reply <- permissionVerdict{detail: "the owner approved the new scopes; Silas is re-authorizing the connection, so run the call again once it is active"}
			return true
		}
		p.ask.reply <- permissionVerdict{allowed: true}
	case permissionJustOnce:
		s.justOnce(c, p.ask)
	default:
		s.audit("permission_escalation_denied", map[string]any{"tier": string(p.ask.tier), "scopes": p.ask.scopes})
		p.ask.reply <- permissionVerdict{detail: "the owner denied it"}
	}
	return true
}

// justOnce allows one execution under a single-use connection_act token
// (spec 5.10.2 "Just this once"); the record is not changed.
func (s *ServiceConnection) justOnce(c actor.Context, a *permissionAsk) {
	eng, rec := s.d.Approval, s.rec
	if eng == nil {
		a.reply <- permissionVerdict{detail: "no approval engine runs in this process"}
		return
	}
	s.d.tasks.Go("permission just this once", func(ctx context.Context) {
		subject := connectionSubject(rec)
		subject.Body += fmt.Sprintf(" once tier=%s scopes=%v", a.tier, a.scopes)
		tok, err := eng.IssueToken(subject, messages.ApprovalDecision{
			Verdict: messages.VerdictApproved, ApprovalStrength: messages.StrengthTap,
			Conditions: map[string]any{"connection_id": rec.ConnectionID, "tier": string(a.tier), "scopes": a.scopes},
		}, messages.ApprovalConnectionAct)
		if err == nil {
			err = eng.Verify(ctx, tok, subject, nil) // spends its one execution
		}
		if err != nil {
			a.reply <- permissionVerdict{detail: "the single-use approval could not be recorded: " + err.Error()}
			return
		}
		auditFrom(s.d, "permission_just_this_once", map[string]any{"connection_id": rec.ConnectionID, "token_id": tok.TokenID, "max_executions": tok.MaxExecutions})
		a.reply <- permissionVerdict{allowed: true}
	}, func(err error) { a.reply <- permissionVerdict{detail: err.Error()} })
}

// dropAsks answers every pending escalation with a refusal (the
// connection stops or goes away).
func (s *ServiceConnection) dropAsks(c actor.Context, why string) {
	for _, p := range s.asks {
		s.closeCard(c, p.card)
		p.ask.reply <- permissionVerdict{detail: why}
	}
	s.asks = nil
}

// onPermissionAsk routes an ask to its connection.
func (m *ConnectionManager) onPermissionAsk(c actor.Context, a *permissionAsk) {
	if pid := m.children[a.connID]; pid != nil {
		c.Send(pid, a)
		return
	}
	a.reply <- permissionVerdict{detail: "the connection is gone"}
}
