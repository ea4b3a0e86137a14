package fakebot

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Options configure a Server. The zero value is usable.
type Options struct {
	// Token is the bot token the fake accepts in /bot<token>/; requests with
	// any other token get 401. Default "123456:TEST-fakebot-token".
	Token string
	// PollUnit is how long one second of getUpdates' timeout lasts, so
	// tests can long-poll without waiting real seconds. Default 1s.
	PollUnit time.Duration
	// WebhookRetry is how long the fake waits before redelivering an update
	// the webhook refused (Telegram backs off longer). Default 20ms.
	WebhookRetry time.Duration
	// BotID and BotUsername identify the bot in getMe and in sent messages.
	// Defaults: the numeric prefix of Token, "silas_test_bot".
	BotID       int64
	BotUsername string
}

// Server is a running fake Bot API server. Its methods are safe for
// concurrent use.
type Server struct {
	opts    Options
	srv     *httptest.Server
	methods map[string]methodFunc
	closed  chan struct{}
	once    sync.Once
	wg      sync.WaitGroup // webhook delivery goroutines

	mu         sync.Mutex
	changed    chan struct{} // closed and replaced on every state change
	nextUpd    int64
	nextMsg    int
	nextCBQ    int
	updates    []pendingUpdate // not yet confirmed, in update_id order
	chats      map[int64]bool
	messages   map[msgKey]*Message // current state of each bot message
	callbacks  map[string]bool     // callback query id -> answered
	sent       []Message
	answers    []CallbackAnswer
	actions    []ChatAction
	requests   []Request
	deliveries []WebhookDelivery
	failures   map[string][]apiError // injected failures, by lower-case method
	poll       chan struct{}         // closed to terminate the running getUpdates
	webhook    *webhookState
}

type msgKey struct {
	chat int64
	id   int
}

type pendingUpdate struct {
	id   int64
	json []byte
}

type methodFunc func(ctx context.Context, p params) (any, *apiError)

// apiError is a failed call's answer: HTTP status and error_code Code,
// description Description, and parameters.retry_after for 429.
type apiError struct {
	Code        int
	Description string
	RetryAfter  int
}

func badRequest(desc string) *apiError {
	return &apiError{Code: http.StatusBadRequest, Description: "Bad Request: " + desc}
}

// New starts a fake server on a loopback port. Close it when done.
func New(opts Options) *Server {
	if opts.Token == "" {
		opts.Token = "123456:TEST-fakebot-token"
	}
	if opts.PollUnit <= 0 {
		opts.PollUnit = time.Second
	}
	if opts.WebhookRetry <= 0 {
		opts.WebhookRetry = 20 * time.Millisecond
	}
	if opts.BotUsername == "" {
		opts.BotUsername = "silas_test_bot"
	}
	if opts.BotID == 0 {
		prefix, _, _ := strings.Cut(opts.Token, ":")
		if id, err := strconv.ParseInt(prefix, 10, 64); err == nil && id > 0 {
			opts.BotID = id
		} else {
			opts.BotID = 123456
		}
	}
	s := &Server{
		opts:      opts,
		closed:    make(chan struct{}),
		changed:   make(chan struct{}),
		nextUpd:   100000,
		nextMsg:   1,
		chats:     map[int64]bool{},
		messages:  map[msgKey]*Message{},
		callbacks: map[string]bool{},
		failures:  map[string][]apiError{},
	}
	s.methods = map[string]methodFunc{
		"getme":               s.getMe,
		"getupdates":          s.getUpdates,
		"sendmessage":         s.sendMessage,
		"editmessagetext":     s.editMessageText,
		"answercallbackquery": s.answerCallbackQuery,
		"sendchataction":      s.sendChatAction,
		"setwebhook":          s.setWebhook,
		"deletewebhook":       s.deleteWebhook,
		"getwebhookinfo":      s.getWebhookInfo,
	}
	s.srv = httptest.NewServer(s)
	return s
}

// Start is New for a test: the server closes when t ends.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	s := New(opts)
	t.Cleanup(s.Close)
	return s
}

// URL is the base URL to configure as the client's API server
// (Telegram's is https://api.telegram.org).
func (s *Server) URL() string { return s.srv.URL }

// Token is the bot token the fake accepts.
func (s *Server) Token() string { return s.opts.Token }

// Close ends long polls and webhook deliveries and stops the server.
func (s *Server) Close() {
	s.once.Do(func() {
		close(s.closed)
		s.mu.Lock()
		if s.webhook != nil {
			s.webhook.cancel()
			s.webhook = nil
		}
		s.mu.Unlock()
		s.wg.Wait()
		s.srv.Close()
	})
}

// ServeHTTP routes /bot<token>/<method> to the method's implementation.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/bot")
	token, method, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 {
		writeResponse(w, nil, &apiError{Code: http.StatusNotFound, Description: "Not Found"})
		return
	}
	if token != s.opts.Token {
		writeResponse(w, nil, &apiError{Code: http.StatusUnauthorized, Description: "Unauthorized"})
		return
	}
	p, body, err := readParams(r)
	if err != nil {
		s.finish(w, Request{Method: method, Body: body}, nil, badRequest("can't parse request: "+err.Error()))
		return
	}
	req := Request{Method: method, Params: p, Body: body}
	fn, ok := s.methods[strings.ToLower(method)]
	if !ok {
		s.finish(w, req, nil, &apiError{Code: http.StatusNotFound, Description: "Not Found: method not found"})
		return
	}
	if f := s.takeFailure(method); f != nil {
		s.finish(w, req, nil, f)
		return
	}
	result, aerr := fn(r.Context(), p)
	s.finish(w, req, result, aerr)
}

// finish records req and writes the answer.
func (s *Server) finish(w http.ResponseWriter, req Request, result any, aerr *apiError) {
	req.Status = http.StatusOK
	if aerr != nil {
		req.Status = aerr.Code
	}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	s.notifyLocked()
	s.mu.Unlock()
	writeResponse(w, result, aerr)
}

func writeResponse(w http.ResponseWriter, result any, aerr *apiError) {
	w.Header().Set("Content-Type", "application/json")
	resp := tgResponse{OK: aerr == nil}
	status := http.StatusOK
	if aerr != nil {
		status = aerr.Code
		resp.ErrorCode = aerr.Code
		resp.Description = aerr.Description
		if aerr.RetryAfter > 0 {
			resp.Parameters = &tgParameters{RetryAfter: aerr.RetryAfter}
		}
	} else {
		raw, err := json.Marshal(result)
		if err != nil {
			status = http.StatusInternalServerError
			resp = tgResponse{ErrorCode: status, Description: "Internal Server Error: " + err.Error()}
		} else {
			resp.Result = raw
		}
	}
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(resp)
}

// notifyLocked wakes WaitFor callers and long polls. s.mu must be held.
func (s *Server) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// KnownChat makes chatID a chat the bot may write to, as if its user had
// started the bot. Chats that pushed an update are known already.
func (s *Server) KnownChat(chatID int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.chats[chatID] = true
}

func (s *Server) botUser() tgUser {
	return tgUser{ID: s.opts.BotID, IsBot: true, FirstName: "Silas", Username: s.opts.BotUsername}
}

func (s *Server) getMe(context.Context, params) (any, *apiError) {
	u := s.botUser()
	return struct {
		tgUser
		CanJoinGroups bool `json:"can_join_groups"`
	}{u, true}, nil
}
