package actors

import (
	"errors"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/persistence"
)

// diskFullText is what a sender hears while the store refuses new messages
// for lack of disk space. The path and the figures go to the log, not to
// the client, who may be an anonymous customer.
const diskFullText = "Silas's disk is almost full, so your message was not accepted and nothing of it was stored; " +
	"please send it again in a few minutes."

// refuseWhenDiskFull refuses a new message at once while the store refuses
// new work (free space below persistence.min_free_mb), before a turn starts
// a model call whose answer could not be saved. It reads a cached
// measurement (no system call), so it may run in Receive. It reports
// whether it refused.
func (s *Scope) refuseWhenDiskFull(m *messages.UserMessage) bool {
	err := s.d.DB.AcceptingWork()
	if !errors.Is(err, persistence.ErrDiskFull) {
		return false
	}
	s.d.Log.Debug().Err(err).Str("scope", s.id).Str("message_id", m.MessageID).Msg("message refused")
	s.reject(m, messages.CodeUnavailable, diskFullText)
	return true
}

// rejectUnstored tells the sender that its message could not be journaled,
// and so was not accepted.
func (s *Scope) rejectUnstored(m *messages.UserMessage, err error) {
	if errors.Is(err, persistence.ErrDiskFull) {
		s.d.Log.Warn().Err(err).Str("scope", s.id).Str("message_id", m.MessageID).Msg("message refused")
		s.reject(m, messages.CodeUnavailable, diskFullText)
		return
	}
	s.d.Log.Error().Err(err).Str("scope", s.id).Msg("journal user message")
	s.reject(m, messages.CodeInternal, "your message could not be stored, so it was not accepted; please resend it")
}
