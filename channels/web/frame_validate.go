package web

import (
	"errors"
	"fmt"
	"strings"

	"github.com/silas-ai/silas/messages"
)

// FieldError names the client frame field that is wrong and why. It wraps
// ErrFieldType (wrong JSON type, or the field appears twice) or
// ErrInvalidField (a value the protocol does not allow). The transport
// answers it with CodeBadRequest naming the field, except for "type",
// whose absence makes the frame no frame at all (CodeInvalidJSON).
type FieldError struct {
	Field   string // the JSON key, e.g. "message_id"
	Problem string // what is wrong and how to fix it, never the value
	kind    error
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("%v: field %q %s", e.kind, e.Field, e.Problem)
}

func (e *FieldError) Unwrap() error { return e.kind }

// Limits of the fields ValidateFrame checks.
const (
	// MaxIDBytes bounds message_id, request_id, ref_id and each selected
	// item id.
	MaxIDBytes = 128
	// maxWordBytes bounds the enumerated fields (type, verdict, step_type,
	// action, selected_action).
	maxWordBytes = 64
	// maxTokenBytes bounds token and session_token.
	maxTokenBytes = 4096
	// maxShortBytes bounds sender_id, signature, nonce and timestamp.
	maxShortBytes = 256
	// maxValueBytes bounds selected_value.
	maxValueBytes = 1024
	// maxItems bounds selected_item_ids.
	maxItems = 1000
)

// fieldRule is the check of one kind of string field.
type fieldRule int

const (
	ruleID    fieldRule = iota // [A-Za-z0-9._:-] only
	ruleShort                  // no control characters
	ruleText                   // no NUL
)

// ValidateFrame checks every field of a decoded frame against the protocol's
// limits: identifiers and enumerated values are short and made of
// [A-Za-z0-9._:-], texts fit maxText bytes, and no string carries a NUL
// byte or (outside texts) a control character. It returns a *FieldError for the first field that
// fails, in the frame's field order, or nil. An empty (absent) field always
// passes; whether a frame type needs a field is the Conn's judgement.
func ValidateFrame(f *messages.Frame, maxText int) error {
	checks := [...]struct {
		name  string
		v     string
		rule  fieldRule
		limit int
	}{
		{"type", f.Type, ruleID, maxWordBytes},
		{"token", f.Token, ruleShort, maxTokenBytes},
		{"session_token", f.SessionToken, ruleShort, maxTokenBytes},
		{"text", f.Text, ruleText, maxText},
		{"message_id", f.MessageID, ruleID, MaxIDBytes},
		{"sender_id", f.SenderID, ruleShort, maxShortBytes},
		{"request_id", f.RequestID, ruleID, MaxIDBytes},
		{"verdict", f.Verdict, ruleID, maxWordBytes},
		{"edited_text", f.EditedText, ruleText, maxText},
		{"selected_value", f.SelectedValue, ruleShort, maxValueBytes},
		{"freetext", f.Freetext, ruleText, maxText},
		{"ref_id", f.RefID, ruleID, MaxIDBytes},
		{"step_type", f.StepType, ruleID, maxWordBytes},
		{"action", f.Action, ruleID, maxWordBytes},
		{"selected_action", f.SelectedAction, ruleID, maxWordBytes},
		{"signature", f.Signature, ruleShort, maxShortBytes},
		{"nonce", f.Nonce, ruleShort, maxShortBytes},
		{"timestamp", f.Timestamp, ruleShort, maxShortBytes},
		{"reply_to", f.ReplyTo, ruleID, MaxIDBytes},
	}
	for _, c := range checks {
		if problem := checkField(c.v, c.rule, c.limit); problem != "" {
			return &FieldError{Field: c.name, Problem: problem, kind: ErrInvalidField}
		}
	}
	if len(f.SelectedItemIDs) > maxItems {
		return &FieldError{Field: "selected_item_ids", Problem: fmt.Sprintf("lists more than %d ids", maxItems), kind: ErrInvalidField}
	}
	for _, id := range f.SelectedItemIDs {
		if problem := checkField(id, ruleID, MaxIDBytes); problem != "" {
			return &FieldError{Field: "selected_item_ids", Problem: "has an id that " + strings.TrimPrefix(problem, "must "), kind: ErrInvalidField}
		}
	}
	return nil
}

// checkField returns what is wrong with v under rule, or "".
func checkField(v string, rule fieldRule, limit int) string {
	if v == "" {
		return ""
	}
	if len(v) > limit {
		return fmt.Sprintf("must be at most %d bytes, got %d", limit, len(v))
	}
	switch rule {
	case ruleID:
		for i := 0; i < len(v); i++ {
			if !idByte(v[i]) {
				return "must use only the characters A-Z a-z 0-9 . _ : - (a UUID fits)"
			}
		}
	case ruleShort:
		for _, r := range v {
			if r < ' ' || r == 0x7f {
				return "must not contain control characters"
			}
		}
	case ruleText:
		if strings.IndexByte(v, 0) >= 0 {
			return "must not contain NUL characters (\\u0000)"
		}
	}
	return ""
}

// idByte reports whether c may appear in an identifier.
func idByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '.' || c == '_' || c == ':' || c == '-'
}

// frameErrorEvent maps a DecodeFrame or ValidateFrame error to the event the
// client gets: bad_request naming the field, or invalid_json.
func frameErrorEvent(err error, requestType string) *messages.ErrorEvent {
	var fe *FieldError
	if !errors.As(err, &fe) {
		ev := messages.NewError(messages.CodeInvalidJSON, requestType)
		ev.Message += " (" + err.Error() + ")"
		return ev
	}
	if fe.Field == "type" && errors.Is(err, ErrFieldType) {
		ev := messages.NewError(messages.CodeInvalidJSON, "")
		ev.Message += " (" + err.Error() + ")"
		ev.Field = fe.Field
		return ev
	}
	ev := messages.NewError(messages.CodeBadRequest, requestType)
	ev.Field = fe.Field
	ev.Message = fmt.Sprintf("Field %q %s; fix it and send the frame again.", fe.Field, fe.Problem)
	return ev
}
