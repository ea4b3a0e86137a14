package telegram

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/silas-ai/silas/messages"
)

// cardEvents are the server events that ask the owner for a decision (the
// CARD_EVENTS of the web app), each with the frame that answers it.
var cardEvents = map[string]string{
	messages.EventApprovalRequest:      messages.TypeApprovalResponse,
	messages.EventGateApproval:         messages.TypeGateResponse,
	messages.EventPermissionEscalation: messages.TypePermissionEscalationResponse,
	messages.EventConnectionFailure:    messages.TypeConnectionFailureResponse,
	messages.EventConnectionSetupStep:  messages.TypeConnectionSetupResponse,
	messages.EventSecureInputRequest:   messages.TypeSecureInputCompleted,
	"checkpoint":                       messages.TypeCheckpoint,
	"batch_review":                     messages.TypeBatchReviewResponse,
	"draft_review":                     messages.TypeDraftReviewResponse,
	"decision":                         messages.TypeDecisionResponse,
	"suggestion":                       messages.TypeSuggestionResponse,
	"autonomy_threshold_review":        messages.TypeAutonomyThresholdResponse,
}

func isCardEvent(t string) bool { _, ok := cardEvents[t]; return ok }

// failureCardTTL is how long a connection failure card's buttons work; the
// event carries no expiry of its own.
const failureCardTTL = time.Hour

// cardState is a card shown in the chat.
type cardState struct {
	card  Card
	msgID int
}

// A button's verdict is a short code, so that a UUID request id and the
// code fit in Telegram's 64 bytes of callback data. The code says which
// frame answers the card, so a card tapped after a restart (when the
// bridge has forgotten it) is still answered right.
type verdictCode struct {
	frame, value, outcome string
}

var verdictCodes = map[string]verdictCode{
	"aa": {messages.TypeApprovalResponse, "approved", "✅ Approved"},
	"ad": {messages.TypeApprovalResponse, "declined", "❌ Declined: nothing runs"},
	"ga": {messages.TypeGateResponse, "approved", "✅ Allowed"},
	"gd": {messages.TypeGateResponse, "declined", "⛔ Blocked"},
	"pa": {messages.TypePermissionEscalationResponse, "approve", "✅ Access approved"},
	"po": {messages.TypePermissionEscalationResponse, "just_this_once", "☑️ Allowed just this once"},
	"pd": {messages.TypePermissionEscalationResponse, "deny", "❌ Denied"},
}

// failurePrefix starts the verdict of a connection failure's recovery
// option: "f:" + the option's action.
const failurePrefix = "f:"

// Request ids such as "conn-<uuid>" are signed as the UUID (16 bytes in
// callback data) with the prefix after the verdict: "aa|conn-". Telegram's
// 64 bytes leave room for 14 bytes of verdict next to a UUID.
const (
	prefixSep       = "|"
	maxVerdictBytes = 14
	maxIDPrefix     = 10
)

// signable returns c as its buttons are signed: a request id that ends in
// a UUID keeps only the UUID, its prefix rides on each verdict. Buttons
// whose verdict would not fit are left out (the card's link to the app
// still offers them).
func signable(c Card) Card {
	if len(c.RequestID) < 36 {
		return c
	}
	prefix, id := c.RequestID[:len(c.RequestID)-36], c.RequestID[len(c.RequestID)-36:]
	if u, err := uuid.Parse(id); err != nil || u.String() != id || len(prefix) > maxIDPrefix || strings.Contains(prefix, prefixSep) {
		return c
	}
	out := c
	out.RequestID, out.Buttons = id, nil
	for _, b := range c.Buttons {
		v := b.Verdict
		if prefix != "" {
			v += prefixSep + prefix
		}
		if len(v) <= maxVerdictBytes {
			out.Buttons = append(out.Buttons, CardButton{Verdict: v, Label: b.Label})
		}
	}
	return out
}

// requestOf is the full request id a verified button answers.
func requestOf(d CallbackData) string {
	_, prefix, _ := strings.Cut(d.Verdict, prefixSep)
	return prefix + d.RequestID
}

// frameFor turns a verified button into the frame that answers its card
// and the outcome the card shows.
func frameFor(d CallbackData) (*messages.Frame, string, bool) {
	verdict, _, _ := strings.Cut(d.Verdict, prefixSep)
	id := requestOf(d)
	if action, ok := strings.CutPrefix(verdict, failurePrefix); ok && action != "" {
		return &messages.Frame{Type: messages.TypeConnectionFailureResponse, RequestID: id, SelectedAction: action},
			"✅ Chosen: " + action, true
	}
	v, ok := verdictCodes[verdict]
	if !ok {
		return nil, "", false
	}
	return &messages.Frame{Type: v.frame, RequestID: id, Verdict: v.value}, v.outcome, true
}

// Card events, reduced to what a Telegram card shows.
type (
	approvalEvent struct {
		RequestID  string                       `json:"request_id"`
		WorkItemID string                       `json:"work_item_id"`
		Title      string                       `json:"title"`
		Body       string                       `json:"body"`
		Scope      string                       `json:"scope"`
		RiskLevel  string                       `json:"risk_level"`
		ExpiresAt  time.Time                    `json:"expires_at"`
		Budget     *messages.Budget             `json:"budget"`
		Verify     []messages.VerificationCheck `json:"verify"`
		Plan       *struct {
			TaskPlans []struct {
				Verify []messages.VerificationCheck `json:"verify"`
			} `json:"task_plans"`
		} `json:"plan"`
	}
	gateEvent struct {
		RequestID string          `json:"request_id"`
		GateName  string          `json:"gate_name"`
		Value     json.RawMessage `json:"value"`
		Context   json.RawMessage `json:"context"`
	}
	permissionEvent struct {
		RequestID            string    `json:"request_id"`
		ConnectionName       string    `json:"connection_name"`
		CurrentPermissions   []string  `json:"current_permissions"`
		RequestedPermissions []string  `json:"requested_permissions"`
		Reason               string    `json:"reason"`
		RiskLevel            string    `json:"risk_level"`
		ExpiresAt            time.Time `json:"expires_at"`
	}
	failureEvent struct {
		RequestID       string                    `json:"request_id"`
		Service         string                    `json:"service"`
		FailureType     string                    `json:"failure_type"`
		Message         string                    `json:"message"`
		RecoveryOptions []messages.RecoveryOption `json:"recovery_options"`
		RiskLevel       string                    `json:"risk_level"`
	}
	setupEvent struct {
		RequestID string `json:"request_id"`
		Service   string `json:"service"`
		StepType  string `json:"step_type"`
	}
	secureEvent struct {
		RefID   string                       `json:"ref_id"`
		Request *messages.SecureInputRequest `json:"request"`
	}
	otherCardEvent struct {
		RequestID string `json:"request_id"`
		Title     string `json:"title"`
	}
)

// buildCard turns a card event into a Card; ok is false for an event that
// asks nothing (a setup step that only reports progress).
func (s *session) buildCard(typ string, raw []byte) (c Card, ok bool, err error) {
	webURL := s.b.cfg.WebAppURL + "/#review"
	now := s.b.cfg.Now()
	switch typ {
	case messages.EventApprovalRequest:
		var e approvalEvent
		if err := json.Unmarshal(raw, &e); err != nil {
			return Card{}, false, err
		}
		c = Card{RequestID: e.RequestID, Title: e.Title, Body: e.Body, WebURL: webURL, Expires: e.ExpiresAt}
		approve, decline := "✅ Approve + run plan", "Decline, run nothing"
		switch e.Scope {
		case string(messages.ApprovalSkillInstall):
			// Installing a skill installs code that work items run.
			c.Risk = RiskHigh
		case string(messages.ApprovalConnectionManage):
			c.Risk = riskOr(e.RiskLevel, RiskHigh)
			approve, decline = "✅ Approve + connect", "Decline, connect nothing"
		default:
			c.Risk = planRisk(e)
			c.Body = planBody(e)
			if e.WorkItemID != "" {
				if len(s.rs.titles) >= maxTitles {
					clear(s.rs.titles)
				}
				s.rs.titles[e.WorkItemID] = e.Title
			}
		}
		c.Buttons = []CardButton{{Verdict: "aa", Label: approve}, {Verdict: "ad", Label: decline}}
	case messages.EventGateApproval:
		var e gateEvent
		if err := json.Unmarshal(raw, &e); err != nil {
			return Card{}, false, err
		}
		name := e.GateName
		if name == "" {
			name = "policy"
		}
		c = Card{RequestID: e.RequestID, Title: fmt.Sprintf("Gate %q wants your call", name), Risk: RiskLow, WebURL: webURL,
			Body:    "A policy gate flagged this turn and needs your approval to continue.\n\nValue: " + jsonText(e.Value),
			Expires: now.Add(s.b.cfg.GateTimeout),
			Buttons: []CardButton{{Verdict: "ga", Label: "Allow and continue"}, {Verdict: "gd", Label: "Block it"}}}
		if ctx := jsonText(e.Context); ctx != "" && ctx != "null" && ctx != "{}" {
			c.Body += "\nContext: " + ctx
		}
	case messages.EventPermissionEscalation:
		var e permissionEvent
		if err := json.Unmarshal(raw, &e); err != nil {
			return Card{}, false, err
		}
		c = Card{RequestID: e.RequestID, Title: "Give " + orText(e.ConnectionName, "a connection") + " more access", Risk: riskOr(e.RiskLevel, RiskMedium),
			Body: e.Reason + "\n\nNow: " + orText(strings.Join(e.CurrentPermissions, ", "), "nothing") +
				"\nAsked for: " + strings.Join(e.RequestedPermissions, ", "),
			WebURL: webURL, Expires: e.ExpiresAt,
			Buttons: []CardButton{{Verdict: "pa", Label: "Approve access"}, {Verdict: "po", Label: "Just this once"}, {Verdict: "pd", Label: "Deny"}}}
	case messages.EventConnectionFailure:
		var e failureEvent
		if err := json.Unmarshal(raw, &e); err != nil {
			return Card{}, false, err
		}
		c = Card{RequestID: e.RequestID, Title: orText(e.Service, "A connection") + ": " + orText(strings.ReplaceAll(e.FailureType, "_", " "), "failed"),
			Body: e.Message, Risk: riskOr(e.RiskLevel, RiskLow), WebURL: webURL, Expires: now.Add(failureCardTTL)}
		for _, o := range e.RecoveryOptions {
			if o.Action == "skip" || !Risk(orText(o.RiskLevel, "low")).tappable() {
				continue
			}
			c.Buttons = append(c.Buttons, CardButton{Verdict: failurePrefix + o.Action, Label: o.Label})
		}
		c.Buttons = append(c.Buttons, CardButton{Verdict: failurePrefix + "skip", Label: "Skip"})
	case messages.EventConnectionSetupStep:
		var e setupEvent
		if err := json.Unmarshal(raw, &e); err != nil {
			return Card{}, false, err
		}
		switch e.StepType {
		case messages.StepDeviceCode, messages.StepBrowserRedirect:
		default:
			return Card{}, false, nil // progress, completion and failure arrive as connection_status too
		}
		// Sign-in codes and links stay in the app: nothing that signs in
		// travels through Telegram.
		c = Card{RequestID: e.RequestID, Title: "Connect " + orText(e.Service, "a service") + ": sign in from the Silas app",
			Body: "The sign-in step is waiting for you in the app's Review.", WebURL: webURL}
	case messages.EventSecureInputRequest:
		var e secureEvent
		if err := json.Unmarshal(raw, &e); err != nil {
			return Card{}, false, err
		}
		label := "a secret"
		if e.Request != nil && e.Request.Label != "" {
			label = e.Request.Label
		}
		c = Card{RequestID: e.RefID, Title: "Silas needs " + label,
			Body:   "Secrets never travel through Telegram. Open the secure form in the Silas app and type it there.",
			WebURL: webURL}
	default:
		var e otherCardEvent
		if err := json.Unmarshal(raw, &e); err != nil {
			return Card{}, false, err
		}
		c = Card{RequestID: e.RequestID, Title: orText(e.Title, "A decision is waiting for you"),
			Body: "Answer it in the Silas app's Review.", WebURL: webURL}
	}
	if c.RequestID == "" {
		return Card{}, false, errors.New("card without a request id")
	}
	return c, true, nil
}

// onCard shows a card: with an inline keyboard when its risk allows an
// answer in Telegram, else only a link to the web app.
func (s *session) onCard(typ string, raw []byte) {
	r := &s.rs
	if !s.owner {
		s.b.log.Warn().Str("type", typ).Msg("telegram: a card reached a customer's chat; not shown")
		return
	}
	s.stopTyping()
	c, ok, err := s.buildCard(typ, raw)
	if err != nil {
		s.b.log.Error().Err(err).Str("type", typ).Msg("telegram: card not understood")
		return
	}
	if !ok {
		return
	}
	if _, shown := r.cards[c.RequestID]; shown {
		return // handed again on a new link
	}
	sc := signable(c)
	m, err := RenderCard(s.b.cfg.Signer, s.chat, sc)
	if errors.Is(err, ErrCallbackTooLong) || errors.Is(err, ErrInvalidMessage) {
		// A request id too long to sign, or an expiry missing: answer it
		// in the app.
		s.b.log.Warn().Err(err).Str("request_id", c.RequestID).Msg("telegram: card offered as a link only")
		sc.Buttons = nil
		m, err = RenderCard(s.b.cfg.Signer, s.chat, sc)
	}
	if err != nil {
		s.b.log.Error().Err(err).Str("request_id", c.RequestID).Msg("telegram: card not rendered")
		s.sendHTML(cardFallback(c))
		return
	}
	m.Ref = makeRef(refCard, s.chat, c.RequestID)
	if !s.enqueue(m) {
		return
	}
	r.cards[c.RequestID] = &cardState{card: c}
	r.cardOrder = append(r.cardOrder, c.RequestID)
	if len(r.cardOrder) > maxCards {
		delete(r.cards, r.cardOrder[0])
		r.cardOrder = r.cardOrder[1:]
	}
}

// onCallback hands a verified card answer to the runtime and edits the
// card to show it; it waits for the link when it is not ready.
func (s *session) onCallback(m *callbackItem) {
	if !s.frame(m.frame) {
		s.rs.pending = append(s.rs.pending, m)
		s.ensureLink()
		return
	}
	s.onOutcome(&outcomeItem{reqID: m.frame.RequestID, msgID: m.msgID, outcome: m.outcome})
}

// onOutcome edits a card to show its outcome, without buttons.
func (s *session) onOutcome(m *outcomeItem) {
	if m.msgID == 0 {
		return
	}
	c := Card{RequestID: m.reqID}
	if st := s.rs.cards[m.reqID]; st != nil {
		c = st.card
	}
	s.enqueue(RenderOutcome(s.chat, m.msgID, c, m.outcome))
}

// cardFallback is a card as plain text with the link to the app, for a
// card Telegram refused.
func cardFallback(c Card) string {
	return c.Risk.badge() + " <b>" + truncateHTML(orText(c.Title, "Silas needs your answer"), 256) + "</b>\n\n" +
		"Open the Silas app to answer it: " + EscapeHTML(c.WebURL)
}

// planRisk is the risk of a plan card (spec 0.5.2, as the web app's
// riskOf): high when a check needs the network or the budget is large,
// else medium.
func planRisk(e approvalEvent) Risk {
	if r := Risk(e.RiskLevel); r == RiskHigh || r == RiskIrreversible || r == RiskMedium || r == RiskLow {
		return r
	}
	checks := [][]messages.VerificationCheck{e.Verify}
	if e.Plan != nil {
		for _, t := range e.Plan.TaskPlans {
			checks = append(checks, t.Verify)
		}
	}
	for _, list := range checks {
		for _, c := range list {
			if c.Network {
				return RiskHigh
			}
		}
	}
	if b := e.Budget; b != nil && (b.MaxCostUSD > 5 || b.MaxWallTimeSeconds > 3600) {
		return RiskHigh
	}
	return RiskMedium
}

// planBody is what a plan card says: the plan, its budget and its checks.
func planBody(e approvalEvent) string {
	var b strings.Builder
	b.WriteString(clip(e.Body, 2000))
	if e.Budget != nil {
		fmt.Fprintf(&b, "\n\nBudget: up to $%.2f, %d attempts", e.Budget.MaxCostUSD, e.Budget.MaxAttempts)
		if e.Budget.MaxWallTimeSeconds > 0 {
			fmt.Fprintf(&b, ", %s", time.Duration(e.Budget.MaxWallTimeSeconds)*time.Second)
		}
	}
	if len(e.Verify) > 0 {
		b.WriteString("\nChecks:")
		for _, c := range e.Verify {
			b.WriteString("\n• " + c.Name + ": " + clip(c.Run, 200))
			if c.Network {
				b.WriteString(" (network)")
			}
		}
	}
	return b.String()
}

func riskOr(s string, def Risk) Risk {
	switch r := Risk(s); r {
	case RiskLow, RiskMedium, RiskHigh, RiskIrreversible:
		return r
	}
	return def
}

func orText(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}

// jsonText is a JSON value for a card: a string as it is, anything else
// as compact JSON, cut short.
func jsonText(raw json.RawMessage) string {
	var str string
	if json.Unmarshal(raw, &str) == nil {
		return clip(str, 500)
	}
	return clip(string(raw), 500)
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
