package messages

import (
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// ScopeKind says who a scope belongs to.
type ScopeKind int

// Scope kinds.
const (
	ScopeOwner    ScopeKind = iota // the owner's single scope
	ScopeCustomer                  // one chatbot customer
)

// ScopeFor asks the Stream for a scope's actor, spawning it when needed.
// Sender: a Connection. Receiver: the Stream. Reply: *ScopeRef.
type ScopeFor struct {
	ScopeID string
	Kind    ScopeKind
}

// ScopeRef answers ScopeFor.
type ScopeRef struct {
	ScopeID string
	PID     *actor.PID
}

// Attach asks a scope to deliver its answers to a connection, starting with
// answers still waiting from before (a reconnect, a restart).
// Sender: a Connection. Receiver: a Scope. No reply.
type Attach struct {
	ConnID string
	Sink   Sink
	// Confirms is set when the connection confirms the receipt of every
	// answer with Received (the Telegram channel once sendMessage
	// returned). An answer handed to it counts as delivered only then; if
	// the connection detaches first, the answer goes out again.
	Confirms bool
}

// Received confirms that a connection's client has an answer: ReplyTo is
// the answer's reply_to. An empty ReplyTo turns confirmation on for the
// connection from now on (a web client that sends {"type":"received"}).
// Sender: a Connection. Receiver: a Scope. No reply.
type Received struct {
	ConnID  string
	ReplyTo string
}

// Detach tells a scope that a connection is gone.
// Sender: a Connection. Receiver: a Scope. No reply.
type Detach struct {
	ConnID string
}

// UserMessage is a chat message to run as a turn.
// Sender: a Connection. Receiver: a Scope. The scope journals it, then sends
// an AckEvent to Sink; or an error event (busy, rate limited) and drops it.
type UserMessage struct {
	MessageID     string
	Channel       string
	SenderID      string
	Text          string
	Authenticated bool
	Signature     []byte
	Nonce         string
	Timestamp     string
	ReceivedAt    time.Time
	// ClientIP is the address the message came from (the web channel's
	// client IP, see channels.web.trusted_proxies), "" when the channel has
	// none. Admission charges a customer's turns to it; it is not journaled.
	ClientIP string
	Sink     Sink
}

// AckEvent tells the client a message is durably journaled and will be
// answered, even across a crash (server event `ack`).
type AckEvent struct {
	Type      string `json:"type"`
	MessageID string `json:"message_id"`
}

// SessionEvent is the first server event of an authenticated connection.
// Chatbot customers get the session_token that resumes their scope.
type SessionEvent struct {
	Type         string `json:"type"`
	Role         string `json:"role"`
	SessionToken string `json:"session_token,omitempty"`
	Resumed      bool   `json:"resumed,omitempty"`
	// Sandbox tells the owner (never a customer) where agent code runs, so
	// the app can warn when it is not isolated.
	Sandbox *SandboxStatus `json:"sandbox,omitempty"`
}

// SandboxStatus is where the daemon runs agent code: the backend chosen at
// start, whether it isolates the filesystem, PIDs and network, and when no
// backend may run, why and what to enable.
type SandboxStatus struct {
	Backend  string `json:"backend"`
	Isolated bool   `json:"isolated"`
	Problem  string `json:"problem,omitempty"`
}

// Drain asks a scope (or the Stream, for every scope) to finish the turn in
// flight and start no other; queued turns stay journaled for the next start.
// Sender: the system, at shutdown. Reply: *Drained.
type Drain struct{}

// Drained answers Drain.
type Drained struct{}
