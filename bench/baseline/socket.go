package baseline

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"time"

	"github.com/fasthttp/websocket"
)

// Frame types and error codes, as in spec 8.1 and channels/web.
const (
	typeAuth    = "auth"
	typeMessage = "message"

	codeInvalidJSON  = "invalid_json"
	codeUnknownType  = "unknown_type"
	codeUnauthorized = "unauthorized"
	codeInternal     = "internal"
)

// maxFrame is the largest client frame read; a bigger one ends the
// connection.
const maxFrame = 64 << 10

// authTimeout bounds the owner's wait before the auth frame.
const authTimeout = 5 * time.Second

// frame is a client frame: auth or message.
type frame struct {
	Type      string `json:"type"`
	Token     string `json:"token"`
	Text      string `json:"text"`
	MessageID string `json:"message_id"`
}

type sessionEvent struct {
	Type         string `json:"type"`
	Role         string `json:"role"`
	SessionToken string `json:"session_token,omitempty"`
}

type ackEvent struct {
	Type      string `json:"type"`
	MessageID string `json:"message_id"`
}

type answerEvent struct {
	Type      string    `json:"type"`
	Text      string    `json:"text"`
	Sender    string    `json:"sender"`
	Timestamp time.Time `json:"timestamp"`
	ReplyTo   string    `json:"reply_to"`
}

type errorEvent struct {
	Type    string `json:"type"`
	Code    string `json:"code"`
	Message string `json:"message"`
	ReplyTo string `json:"reply_to,omitempty"`
}

// serveSocket runs one connection: the session, then its turns one at a
// time on this goroutine, until the connection ends; then it closes it.
func (s *Server) serveSocket(ws *websocket.Conn, owner bool) {
	defer ws.Close()
	if !s.track(ws) {
		_ = ws.WriteControl(websocket.CloseMessage,
			websocket.FormatCloseMessage(websocket.CloseGoingAway, "server shutting down"), time.Now().Add(time.Second))
		return
	}
	defer s.untrack(ws)
	ws.SetReadLimit(maxFrame)
	session := sessionEvent{Type: "session", Role: "customer"}
	if owner {
		if !s.authenticate(ws) {
			return
		}
		session.Role = "owner"
	} else {
		session.SessionToken = rand.Text()
	}
	if ws.WriteJSON(&session) != nil {
		return
	}
	for {
		_, b, err := ws.ReadMessage()
		if err != nil {
			return
		}
		var f frame
		switch {
		case json.Unmarshal(b, &f) != nil:
			err = sendError(ws, codeInvalidJSON, "the frame is not a JSON object; fix it and send it again", "")
		case f.Type == typeMessage:
			err = s.turn(ws, &f)
		default:
			err = sendError(ws, codeUnknownType, fmt.Sprintf("the baseline does not know frame type %q; it takes message frames", f.Type), "")
		}
		if err != nil {
			return
		}
	}
}

// authenticate reads the owner's auth frame; on failure it sends an error
// event and returns false.
func (s *Server) authenticate(ws *websocket.Conn) bool {
	_ = ws.SetReadDeadline(time.Now().Add(authTimeout))
	_, b, err := ws.ReadMessage()
	if err != nil {
		_ = sendError(ws, codeUnauthorized, "no auth frame in time; reconnect and send {\"type\":\"auth\",\"token\":...} first", "")
		return false
	}
	var f frame
	if json.Unmarshal(b, &f) != nil || f.Type != typeAuth || s.opts.OwnerToken == "" ||
		subtle.ConstantTimeCompare([]byte(f.Token), []byte(s.opts.OwnerToken)) != 1 {
		_ = sendError(ws, codeUnauthorized, "authenticate first with a valid token: {\"type\":\"auth\",\"token\":...}", "")
		return false
	}
	_ = ws.SetReadDeadline(time.Time{})
	return true
}

// turn acks a message, asks the model and sends its answer. The error is
// the connection's: a failed model call is reported to the client and the
// connection goes on.
func (s *Server) turn(ws *websocket.Conn, f *frame) error {
	if err := ws.WriteJSON(&ackEvent{Type: "ack", MessageID: f.MessageID}); err != nil {
		return err
	}
	text, err := s.model.answer(f.Text)
	if err != nil {
		return sendError(ws, codeInternal, "the model call failed: "+err.Error()+"; send the message again", f.MessageID)
	}
	return ws.WriteJSON(&answerEvent{Type: "message", Text: text, Sender: "silas", Timestamp: time.Now().UTC(), ReplyTo: f.MessageID})
}

func sendError(ws *websocket.Conn, code, msg, replyTo string) error {
	return ws.WriteJSON(&errorEvent{Type: "error", Code: code, Message: msg, ReplyTo: replyTo})
}
