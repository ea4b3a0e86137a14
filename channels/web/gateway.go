package web

// ConnInfo describes one upgraded WebSocket.
type ConnInfo struct {
	ID          string // unique per connection
	Path        string // "/ws" (owner) or "/chat" (chatbot customer)
	RemoteIP    string // the client: the TCP peer, or X-Forwarded-For from a trusted proxy
	PeerIP      string // the TCP peer
	BearerToken string // token offered in Sec-WebSocket-Protocol, "" if none
}

// Outbound is how the session side writes to the socket; safe for concurrent
// use, never blocks.
type Outbound interface {
	// Send queues one server event (any JSON-marshalable value, or
	// json.RawMessage / []byte already encoded, which the caller must not
	// modify afterwards) and reports false when the connection is closed or
	// its send queue is full (then the connection is closed as a slow
	// consumer with close code 1008 and reason "send queue full"). A value
	// that cannot be marshalled is a programming error: it is logged and
	// Send reports false, but the connection stays open.
	Send(ev any) bool
	// Close sends a close frame with code and reason, then closes. Events
	// queued before Close are written first. Only the first Close counts.
	Close(code int, reason string)
}

// Conn receives what the client sent; implemented by the session side.
// Methods must not block. They are called from the socket's read goroutine,
// one at a time.
type Conn interface {
	Frame(f *Frame) // one decoded client frame; f is the Conn's to keep
	Closed()        // the socket is gone (client left, error, or server Close); called exactly once
}

// Gateway attaches sessions to new sockets.
type Gateway interface {
	// Attach is called once per upgraded socket, before any Frame. It must
	// not block and must return a non-nil Conn; a nil Conn makes the server
	// close the socket with 1011.
	Attach(info ConnInfo, out Outbound) Conn
}
