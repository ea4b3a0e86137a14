package messages

// ConnInfo describes one client connection a channel attaches to the
// runtime (for the web channel, one upgraded WebSocket).
type ConnInfo struct {
	ID          string // unique per connection
	Path        string // "/ws" (owner) or "/chat" (chatbot customer)
	RemoteIP    string // the client: the TCP peer, or X-Forwarded-For from a trusted proxy
	PeerIP      string // the TCP peer
	BearerToken string // token offered in Sec-WebSocket-Protocol, "" if none
}

// Outbound is how the session side writes to a client connection; the
// channel turns each server event into its own wire format. Safe for
// concurrent use, never blocks.
type Outbound interface {
	// Send queues one server event (any JSON-marshalable value, or
	// json.RawMessage / []byte already encoded, which the caller must not
	// modify afterwards) and reports false when the connection is closed or
	// its send queue is full (then the connection is closed as a slow
	// consumer; the web channel uses close code 1008 and reason "send queue
	// full"). A value that cannot be marshalled is a programming error: it
	// is logged and Send reports false, but the connection stays open.
	Send(ev any) bool
	// Close sends a close frame with code and reason, then closes. Events
	// queued before Close are written first. Only the first Close counts.
	Close(code int, reason string)
}

// Conn receives what the client sent; implemented by the session side.
// Methods must not block. The channel calls them from one goroutine per
// connection, one at a time.
type Conn interface {
	Frame(f *Frame) // one decoded client frame; f is the Conn's to keep
	Closed()        // the connection is gone (client left, error, or server Close); called exactly once
}

// Gateway attaches sessions to new client connections. The runtime
// implements it; every channel (web, CLI, Telegram) calls it, so that no
// session code depends on a channel package.
type Gateway interface {
	// Attach is called once per connection, before any Frame. It must not
	// block and must return a non-nil Conn; a nil Conn makes the channel
	// drop the connection (the web channel closes the socket with 1011).
	Attach(info ConnInfo, out Outbound) Conn
}
