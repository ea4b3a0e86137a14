package fakebot

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Snapshot is a copy of what the fake has seen, for assertions.
type Snapshot struct {
	// Sent holds every successful sendMessage and editMessageText, in order.
	Sent []Message
	// Answers holds every successful answerCallbackQuery, in order.
	Answers []CallbackAnswer
	// Actions holds every successful sendChatAction, in order.
	Actions []ChatAction
	// Requests holds every API call, failed ones included, in the order
	// they finished.
	Requests []Request
	// Deliveries holds every webhook POST, in order.
	Deliveries []WebhookDelivery
	// Pending counts updates not yet confirmed (by getUpdates with a higher
	// offset, or a 2xx from the webhook).
	Pending int
	// WebhookURL is the webhook set, "" in polling mode.
	WebhookURL string
	// Polling is true while a getUpdates long poll is waiting.
	Polling bool
}

// Calls counts the requests for method that got status (0: any status).
func (s Snapshot) Calls(method string, status int) int {
	n := 0
	for _, r := range s.Requests {
		if strings.EqualFold(r.Method, method) && (status == 0 || r.Status == status) {
			n++
		}
	}
	return n
}

// Snapshot returns a copy of the fake's state.
func (s *Server) Snapshot() Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snapshotLocked()
}

func (s *Server) snapshotLocked() Snapshot {
	snap := Snapshot{
		Sent:       slices.Clone(s.sent),
		Answers:    slices.Clone(s.answers),
		Actions:    slices.Clone(s.actions),
		Requests:   make([]Request, len(s.requests)),
		Deliveries: slices.Clone(s.deliveries),
		Pending:    len(s.updates),
		Polling:    s.poll != nil,
	}
	for i, r := range s.requests {
		r.Params = maps.Clone(r.Params)
		r.Body = slices.Clone(r.Body)
		snap.Requests[i] = r
	}
	if s.webhook != nil {
		snap.WebhookURL = s.webhook.url
	}
	return snap
}

// Sent returns every message the bot sent or edited, in order.
func (s *Server) Sent() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.sent)
}

// Current returns the current state of bot message id in chat (after
// edits).
func (s *Server) Current(chat int64, id int) (Message, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.messages[msgKey{chat, id}]
	if !ok {
		return Message{}, false
	}
	return *m, true
}

// WaitFor blocks until pred holds for the fake's state, and returns nil, or
// until ctx ends, and returns an error describing the last state seen. It
// re-checks on every change of state, so it needs no polling interval.
func (s *Server) WaitFor(ctx context.Context, pred func(Snapshot) bool) error {
	for {
		s.mu.Lock()
		snap := s.snapshotLocked()
		ch := s.changed
		s.mu.Unlock()
		if pred(snap) {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("fakebot: condition not met (%d sent, %d answers, %d actions, %d requests, %d pending): %w",
				len(snap.Sent), len(snap.Answers), len(snap.Actions), len(snap.Requests), snap.Pending, ctx.Err())
		}
	}
}
