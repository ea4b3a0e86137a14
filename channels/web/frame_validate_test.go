package web

import (
	"errors"
	"strings"
	"testing"

	"github.com/silas-ai/silas/messages"
)

func TestFrameValidate(t *testing.T) {
	ok := []*messages.Frame{
		{Type: "message", Text: "hi\n\tthere é😀", MessageID: "6f1c2b9e-8a43-4c1e-9d0b-2f7a4c8e1d55"},
		{Type: "message", MessageID: strings.Repeat("a", MaxIDBytes), SenderID: "customer-4821"},
		{Type: "message", MessageID: "msg:1.2_3-4", Signature: "c2ln+/==", Nonce: "n0nce", Timestamp: "2026-01-02T03:04:05+00:00"},
		{Type: "auth", Token: "owner token with spaces"},
		{Type: "batch_review_response", RequestID: "r1", Verdict: "edit_selection", SelectedItemIDs: []string{"i1", "i2"}},
		{Type: "decision_response", RequestID: "r1", SelectedValue: "Tuesday, 3 pm", Freetext: "any"},
		{Type: "message", Text: strings.Repeat("x", 100)},
	}
	for _, f := range ok {
		if err := ValidateFrame(f, 100); err != nil {
			t.Errorf("Validate(%+v) = %v, want nil", f, err)
		}
	}
	bad := []struct {
		name  string
		f     *messages.Frame
		field string
	}{
		{"message_id too long", &messages.Frame{Type: "message", MessageID: strings.Repeat("a", 5000)}, "message_id"},
		{"message_id with a slash", &messages.Frame{Type: "message", MessageID: "a/b"}, "message_id"},
		{"message_id with a space", &messages.Frame{Type: "message", MessageID: "a b"}, "message_id"},
		{"message_id with unicode", &messages.Frame{Type: "message", MessageID: "é"}, "message_id"},
		{"NUL in text", &messages.Frame{Type: "message", Text: "a\x00b"}, "text"},
		{"text too long", &messages.Frame{Type: "message", Text: strings.Repeat("x", 101)}, "text"},
		{"NUL in type", &messages.Frame{Type: "message\x00"}, "type"},
		{"NUL in sender_id", &messages.Frame{Type: "message", SenderID: "\x00"}, "sender_id"},
		{"newline in token", &messages.Frame{Type: "auth", Token: "a\nb"}, "token"},
		{"session_token too long", &messages.Frame{Type: "auth", SessionToken: strings.Repeat("t", 4097)}, "session_token"},
		{"request_id with quotes", &messages.Frame{Type: "gate_response", RequestID: `"x"`}, "request_id"},
		{"verdict too long", &messages.Frame{Type: "gate_response", Verdict: strings.Repeat("v", 65)}, "verdict"},
		{"NUL in edited_text", &messages.Frame{Type: "draft_review_response", EditedText: "\x00"}, "edited_text"},
		{"NUL in freetext", &messages.Frame{Type: "decision_response", Freetext: "\x00"}, "freetext"},
		{"ref_id path", &messages.Frame{Type: "secure_input_completed", RefID: "../../keys"}, "ref_id"},
		{"bad item id", &messages.Frame{Type: "batch_review_response", SelectedItemIDs: []string{"ok", "no pe"}}, "selected_item_ids"},
		{"too many items", &messages.Frame{Type: "batch_review_response", SelectedItemIDs: make([]string, maxItems+1)}, "selected_item_ids"},
		{"control character in timestamp", &messages.Frame{Type: "message", Timestamp: "2026\x1b[31m"}, "timestamp"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateFrame(tt.f, 100)
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != tt.field || !errors.Is(err, ErrInvalidField) {
				t.Fatalf("Validate = %v, want a FieldError for %q", err, tt.field)
			}
			if strings.Contains(fe.Problem, "\x00") || len(fe.Problem) > 200 {
				t.Errorf("problem %q quotes the value", fe.Problem)
			}
		})
	}
}

func TestFrameErrorEvent(t *testing.T) {
	tests := []struct {
		in    string
		code  messages.Code
		field string
	}{
		{`{"type":"message","text":5}`, messages.CodeBadRequest, "text"},
		{`{"type":"message","text":"a","text":"b"}`, messages.CodeBadRequest, "text"},
		{`{"type":"message","success":"yes"}`, messages.CodeBadRequest, "success"},
		{`{"type":"message","selected_item_ids":{}}`, messages.CodeBadRequest, "selected_item_ids"},
		{`{"type":7}`, messages.CodeInvalidJSON, "type"},
		{`{"type":"message"`, messages.CodeInvalidJSON, ""},
	}
	for _, tt := range tests {
		_, err := DecodeFrame([]byte(tt.in))
		ev := frameErrorEvent(err, "message")
		if ev.Code != tt.code || ev.Field != tt.field {
			t.Errorf("%s: event %+v, want code %s field %q", tt.in, ev, tt.code, tt.field)
		}
		if tt.code == messages.CodeBadRequest && !strings.Contains(ev.Message, `"`+tt.field+`"`) {
			t.Errorf("%s: message %q does not name the field", tt.in, ev.Message)
		}
	}
}

// TestBadFramesAreClientErrors: every bad frame is answered bad_request
// naming the field, the connection stays, and the session never sees it.
func TestBadFramesAreClientErrors(t *testing.T) {
	s, gw := startServer(t, Options{ChatbotEnabled: true, MaxTextBytes: 1000})
	ws := mustDial(t, s, "/chat")
	tests := []struct {
		frame string
		field string
	}{
		{`{"type":"message","text":"hi","message_id":"` + strings.Repeat("m", 5000) + `"}`, "message_id"},
		{`{"type":"message","text":"hi","message_id":"<script>"}`, "message_id"},
		{`{"type":"message","text":"a\u0000b"}`, "text"},
		{`{"type":"message","text":["hi"]}`, "text"},
		{`{"type":"message","text":"hi","message_id":42}`, "message_id"},
		{`{"type":"message","text":"hi","sender_id":{"role":"owner"}}`, "sender_id"},
		{`{"type":"message","text":"` + strings.Repeat("x", 1001) + `"}`, "text"},
		{`{"type":"gate_response","request_id":"r1","verdict":true}`, "verdict"},
	}
	for _, tt := range tests {
		send(t, ws, tt.frame)
		ev := nextError(t, ws)
		if ev.Code != messages.CodeBadRequest || ev.Field != tt.field || !strings.Contains(ev.Message, tt.field) {
			t.Errorf("frame %.80s: %+v, want bad_request for %q", tt.frame, ev, tt.field)
		}
	}
	send(t, ws, `{"type":"message","text":"fine","message_id":"m-1"}`)
	if got := mustNext(t, ws); !strings.Contains(got, "fine") {
		t.Errorf("a good frame after bad ones: %s", got)
	}
	if n := gw.conn(t, 0).frameCount(); n != 1 {
		t.Errorf("the session saw %d frames, want only the good one", n)
	}
}

func FuzzFrameValidate(f *testing.F) {
	f.Add([]byte(`{"type":"message","text":"hi","message_id":"m1"}`))
	f.Add([]byte(`{"type":"message","message_id":"a/b","text":"\u0000"}`))
	f.Add([]byte(`{"type":"batch_review_response","selected_item_ids":["a",null,"b c"]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, err := DecodeFrame(b)
		if err != nil {
			return
		}
		if err := ValidateFrame(fr, DefaultMaxTextBytes); err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field == "" {
				t.Fatalf("Validate error %v names no field", err)
			}
			return
		}
		for i := 0; i < len(fr.MessageID); i++ {
			if !idByte(fr.MessageID[i]) || len(fr.MessageID) > MaxIDBytes {
				t.Fatalf("message_id %q passed", fr.MessageID)
			}
		}
		if strings.IndexByte(fr.Text, 0) >= 0 || len(fr.Text) > DefaultMaxTextBytes {
			t.Fatalf("text with NUL or over the limit passed")
		}
	})
}
