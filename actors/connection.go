package actors

import (
	"crypto/subtle"
	"encoding/base64"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/scheduler"
	"github.com/google/uuid"

	"github.com/silas-ai/silas/messages"
)

// Close codes of the web protocol.
const (
	closeUnauthorized = 4001
	// closeInternal (RFC 6455 1011) ends a socket whose session failed on
	// the server; the client reconnects and resumes.
	closeInternal = 1011
)

// customerSender is the sender id of every customer message.
const customerSender = "customer"

// Connection is the session of one WebSocket: it authenticates the client,
// binds it to its scope and forwards its messages there.
//
// States:
//
//	authenticating  owner connection waiting for its auth frame (5 s)
//	open            authenticated; frames are turned into scope messages
//
// Frames that arrive before the scope's address is known are held, in order.
// Supervision: a panic stops the actor (connectionGuardian) rather than
// restarting it with a fresh session; stopping closes the socket with
// 1011, and the client reconnects, resumes with its session token and
// resends what was not acknowledged.
type Connection struct {
	d    *shared
	info messages.ConnInfo
	out  messages.Outbound

	behavior  actor.Behavior
	kind      messages.ScopeKind
	scopeID   string
	scope     *actor.PID
	binding   bool
	held      []*messages.Frame
	sent      bool // a frame other than auth was handled
	confirms  bool // the client confirms receipts (a "received" frame without reply_to)
	stopTimer scheduler.CancelFunc
	left      bool // leave ran
}

type connClosed struct{}
type authTimeout struct{}

func newConnection(d *shared, info messages.ConnInfo, out messages.Outbound) *Connection {
	c := &Connection{d: d, info: info, out: out, kind: messages.ScopeOwner}
	if info.Path == "/chat" {
		c.kind = messages.ScopeCustomer
	}
	c.behavior.Become(c.authenticating)
	return c
}

// Receive dispatches to the current state.
func (c *Connection) Receive(ctx actor.Context) {
	if _, ok := ctx.Message().(*actor.Stopping); ok {
		// Stopped by the transport's Closed (the close is a no-op then) or
		// after a panic: the socket must not outlive its session. What
		// the connection holds is given back first, so a client that sees
		// the close and reconnects finds its slot free.
		c.leave(ctx)
		c.out.Close(closeInternal, "the session ended on the server; reconnect")
		return
	}
	c.behavior.Receive(ctx)
}

func (c *Connection) authenticating(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		c.onStarted(ctx)
	case *messages.Frame:
		c.onAuthFrame(ctx, m)
	case *authTimeout:
		c.refuse(ctx, messages.CodeAuthTimeout, "no authentication within 5 seconds; reconnect and send {\"type\":\"auth\",\"token\":...} first")
	case *connClosed:
		c.onClosed(ctx)
	}
}

func (c *Connection) open(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *messages.Frame:
		c.onFrame(ctx, m)
	case *messages.ScopeRef:
		c.onBound(ctx, m)
	case *ConnectionAnswer:
		c.onConnectAnswer(m)
	case *confirmationChecked:
		c.onConfirmationChecked(ctx, m)
	case *connClosed:
		c.onClosed(ctx)
	}
}

func (c *Connection) onStarted(ctx actor.Context) {
	c.d.metrics.WSConnections.Inc()
	if c.kind == messages.ScopeCustomer {
		// A customer starts a new session at once; the first server event
		// carries the token that resumes it later.
		c.scopeID = "c-" + uuid.NewString()
		c.out.Send(&messages.SessionEvent{Type: "session", Role: "customer", SessionToken: c.mint()})
		c.behavior.Become(c.open)
		return
	}
	if c.info.BearerToken != "" {
		if c.tokenOK(c.info.BearerToken) {
			c.authenticated(ctx)
		} else {
			c.refuse(ctx, messages.CodeUnauthorized, "invalid token in Sec-WebSocket-Protocol; check silas.channels.web.auth_token")
		}
		return
	}
	wait := time.Duration(c.d.Config.Channels.Web.AuthTimeoutSeconds) * time.Second
	c.stopTimer = scheduler.NewTimerScheduler(ctx).SendOnce(wait, ctx.Self(), &authTimeout{})
}

func (c *Connection) mint() string {
	ttl := time.Duration(c.d.Config.Chatbot.SessionTTLHours) * time.Hour
	return c.d.Sessions.Mint(c.scopeID, c.d.now().Add(ttl))
}

func (c *Connection) tokenOK(token string) bool {
	return c.d.OwnerToken != "" && subtle.ConstantTimeCompare([]byte(token), []byte(c.d.OwnerToken)) == 1
}

func (c *Connection) onAuthFrame(ctx actor.Context, f *messages.Frame) {
	if f.Type != messages.TypeAuth {
		c.refuse(ctx, messages.CodeUnauthorized, "authenticate first: send {\"type\":\"auth\",\"token\":...} as the first frame")
		return
	}
	if !c.tokenOK(f.Token) {
		c.refuse(ctx, messages.CodeUnauthorized, "invalid auth token; check silas.channels.web.auth_token")
		return
	}
	c.confirms = f.Receipts
	c.authenticated(ctx)
}

func (c *Connection) authenticated(ctx actor.Context) {
	if c.stopTimer != nil {
		c.stopTimer()
	}
	c.scopeID = c.d.Config.OwnerID
	sb := c.d.SandboxStatus
	c.out.Send(&messages.SessionEvent{Type: "session", Role: "owner", Sandbox: &sb})
	c.behavior.Become(c.open)
	c.bind(ctx)
}

func (c *Connection) refuse(ctx actor.Context, code messages.Code, text string) {
	c.d.metrics.Errors.With(string(code)).Inc()
	c.out.Send(webError(code, text, ""))
	c.out.Close(closeUnauthorized, string(code))
}

func (c *Connection) bind(ctx actor.Context) {
	if c.scope != nil || c.binding {
		return
	}
	c.binding = true
	ctx.Request(c.d.stream, &messages.ScopeFor{ScopeID: c.scopeID, Kind: c.kind})
}

func (c *Connection) onBound(ctx actor.Context, m *messages.ScopeRef) {
	if m.ScopeID != c.scopeID {
		return
	}
	c.binding = false
	c.scope = m.PID
	ctx.Send(c.scope, &messages.Attach{ConnID: c.info.ID, Sink: c.out, Confirms: c.confirms})
	held := c.held
	c.held = nil
	for _, f := range held {
		c.onFrame(ctx, f)
	}
}

func (c *Connection) onFrame(ctx actor.Context, f *messages.Frame) {
	switch f.Type {
	case messages.TypeAuth:
		c.onResume(ctx, f)
	case messages.TypeMessage:
		if c.kind == messages.ScopeOwner && isConnectCommand(f.Text) {
			c.onConnectCommand(ctx, f)
			return
		}
		c.sent = true
		if c.scope == nil {
			c.held = append(c.held, f)
			c.bind(ctx)
			return
		}
		c.forward(ctx, f)
	case messages.TypeReceived:
		c.onReceived(ctx, f)
	case messages.TypeApprovalResponse:
		c.onApprovalResponse(ctx, f)
	case messages.TypeGateResponse:
		c.onGateResponse(ctx, f)
	case messages.TypeConnectionSetupResponse, messages.TypeConnectionFailureResponse, messages.TypeSecureInputCompleted, messages.TypePermissionEscalationResponse:
		c.onConnectionCard(ctx, f)
	default:
		code, text := messages.CodeUnknownType, "unknown frame type "+quote(f.Type)+"; see the protocol of spec 8.1"
		if messages.IsClientType(f.Type) {
			code, text = messages.CodeNotSupported, quote(f.Type)+" is not supported yet by this server"
		}
		c.d.metrics.Errors.With(string(code)).Inc()
		c.out.Send(webError(code, text, f.Type))
	}
}

// onResume lets a customer return to an earlier session: the auth frame with
// a session_token must come before any message.
func (c *Connection) onResume(ctx actor.Context, f *messages.Frame) {
	if c.kind != messages.ScopeCustomer {
		c.out.Send(webError(messages.CodeBadRequest, "already authenticated", f.Type))
		return
	}
	if c.sent || c.scope != nil || c.binding {
		c.out.Send(webError(messages.CodeBadRequest, "send the auth frame with session_token before any message", f.Type))
		return
	}
	scope, err := c.d.Sessions.Verify(f.SessionToken, c.d.now())
	if err != nil {
		c.refuse(ctx, messages.CodeUnauthorized, err.Error())
		return
	}
	c.scopeID = scope
	c.confirms = c.confirms || f.Receipts
	c.out.Send(&messages.SessionEvent{Type: "session", Role: "customer", SessionToken: f.SessionToken, Resumed: true})
	c.bind(ctx)
}

// onReceived passes a receipt to the scope; one without reply_to turns
// receipts on, also before the connection is attached (then its Attach
// says so).
func (c *Connection) onReceived(ctx actor.Context, f *messages.Frame) {
	if f.ReplyTo == "" {
		c.confirms = true
	}
	if c.scope != nil {
		ctx.Send(c.scope, &messages.Received{ConnID: c.info.ID, ReplyTo: f.ReplyTo})
	}
}

func (c *Connection) forward(ctx actor.Context, f *messages.Frame) {
	if f.Text == "" {
		c.out.Send(webError(messages.CodeBadRequest, "message text is empty; send {\"type\":\"message\",\"text\":...}", f.Type))
		return
	}
	id := f.MessageID
	if id == "" {
		id = uuid.NewString()
	}
	var sig []byte
	if f.Signature != "" {
		// An undecodable signature is no signature: the message keeps the
		// connection's taint.
		sig, _ = base64.StdEncoding.DecodeString(f.Signature)
	}
	// The server names the sender, never the client: a customer's
	// sender_id such as "[owner] owner:" would otherwise be rendered as a
	// speaker label in the model's context. A customer's scope is its
	// identity, so every customer is "customer" within it.
	sender := customerSender
	if c.kind == messages.ScopeOwner {
		sender = c.d.Config.OwnerID
	}
	ctx.Send(c.scope, &messages.UserMessage{
		MessageID: id, Channel: "web", SenderID: sender, Text: f.Text,
		Authenticated: c.kind == messages.ScopeOwner, Signature: sig, Nonce: f.Nonce, Timestamp: f.Timestamp,
		ReceivedAt: c.d.now(), ClientIP: c.info.RemoteIP, Sink: c.out,
	})
}

func (c *Connection) onClosed(ctx actor.Context) {
	c.leave(ctx)
	ctx.Stop(ctx.Self())
}

// leave undoes what the connection holds, once: the gauge, the timer, its
// attachment to the scope.
func (c *Connection) leave(ctx actor.Context) {
	if c.left {
		return
	}
	c.left = true
	c.d.metrics.WSConnections.Dec()
	if c.stopTimer != nil {
		c.stopTimer()
	}
	if c.scope != nil {
		ctx.Send(c.scope, &messages.Detach{ConnID: c.info.ID})
	}
}

func quote(s string) string {
	if len(s) > 64 {
		s = s[:64] + "..."
	}
	return "\"" + s + "\""
}

// onApprovalResponse forwards the owner's verdict on a plan to the scope.
// Only the owner approves plans: a customer connection is told so.
func (c *Connection) onApprovalResponse(ctx actor.Context, f *messages.Frame) {
	if c.kind != messages.ScopeOwner {
		c.d.metrics.Errors.With(string(messages.CodeNotSupported)).Inc()
		c.out.Send(webError(messages.CodeNotSupported, "approval_response is only accepted from the owner connection (/ws)", f.Type))
		return
	}
	v := messages.ApprovalVerdict(f.Verdict)
	if f.RequestID == "" || (v != messages.VerdictApproved && v != messages.VerdictDeclined) {
		c.out.Send(webError(messages.CodeBadRequest, "approval_response needs the request_id of the approval_request and verdict \"approved\" or \"declined\"", f.Type))
		return
	}
	if c.scope == nil {
		c.out.Send(webError(messages.CodeBadRequest, "no approval is pending on this connection yet; wait for an approval_request", f.Type))
		return
	}
	if confirmed, ok := c.confirmation(ctx, f); ok {
		c.forwardAnswer(ctx, f, confirmed)
	}
}

// onGateResponse forwards the owner's verdict on a gate approval to the
// scope. Only the owner answers gate approvals.
func (c *Connection) onGateResponse(ctx actor.Context, f *messages.Frame) {
	if c.kind != messages.ScopeOwner {
		c.d.metrics.Errors.With(string(messages.CodeNotSupported)).Inc()
		c.out.Send(webError(messages.CodeNotSupported, "gate_response is only accepted from the owner connection (/ws)", f.Type))
		return
	}
	if f.RequestID == "" || (f.Verdict != gateVerdictApproved && f.Verdict != gateVerdictDeclined) {
		c.out.Send(webError(messages.CodeBadRequest, "gate_response needs the request_id of the gate_approval and verdict \"approved\" or \"declined\"", f.Type))
		return
	}
	if c.scope == nil {
		c.out.Send(webError(messages.CodeBadRequest, "no gate approval is pending on this connection yet; wait for a gate_approval", f.Type))
		return
	}
	ctx.Send(c.scope, &gateResponse{requestID: f.RequestID, approved: f.Verdict == gateVerdictApproved, sink: c.out})
}

// onConnectionCard forwards the owner's answer to a connection card to
// the ConnectionManager. secure_input_completed is only the app's notice:
// the value went to POST /secrets/{ref_id}, whose handler tells the
// manager itself, so the frame changes nothing and is acknowledged.
func (c *Connection) onConnectionCard(ctx actor.Context, f *messages.Frame) {
	if c.kind != messages.ScopeOwner {
		c.d.metrics.Errors.With(string(messages.CodeNotSupported)).Inc()
		c.out.Send(webError(messages.CodeNotSupported, f.Type+" is only accepted from the owner connection (/ws)", f.Type))
		return
	}
	if f.Type == messages.TypeSecureInputCompleted {
		return
	}
	if f.RequestID == "" {
		c.out.Send(webError(messages.CodeBadRequest, f.Type+" needs the request_id of the card it answers", f.Type))
		return
	}
	if confirmed, ok := c.confirmation(ctx, f); ok {
		c.forwardAnswer(ctx, f, confirmed)
	}
}
