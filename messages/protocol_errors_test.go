package messages

import (
	"encoding/json"
	"regexp"
	"testing"
)

func TestCodeTable(t *testing.T) {
	snake := regexp.MustCompile(`^[a-z]+(_[a-z]+)*$`)
	seen := map[Code]bool{}
	for _, c := range Codes() {
		if seen[c] {
			t.Errorf("code %q listed twice", c)
		}
		seen[c] = true
		if !snake.MatchString(string(c)) {
			t.Errorf("code %q is not snake_case", c)
		}
		if m := c.Message(); len(m) < 20 || m == CodeInternal.Message() && c != CodeInternal {
			t.Errorf("code %q has no message of its own: %q", c, m)
		}
	}
	for _, c := range []Code{CodeInvalidJSON, CodeUnknownType, CodeFrameTooLarge, CodeRateLimited,
		CodeUnauthorized, CodeAuthTimeout, CodeBusy, CodeNotSupported, CodeInternal} {
		if !seen[c] {
			t.Errorf("code %q missing from the table", c)
		}
	}
	if got := Code("no_such_code").Message(); got != CodeInternal.Message() {
		t.Errorf("unknown code message = %q, want the internal one", got)
	}
}

func TestErrorEventJSON(t *testing.T) {
	tests := []struct {
		name string
		ev   *ErrorEvent
		want string
	}{
		{
			name: "without request type",
			ev:   &ErrorEvent{Type: "error", Code: CodeBusy, Message: "m"},
			want: `{"type":"error","code":"busy","message":"m"}`,
		},
		{
			name: "with request type",
			ev:   &ErrorEvent{Type: "error", Code: CodeUnknownType, Message: "m", RequestType: "frobnicate"},
			want: `{"type":"error","code":"unknown_type","message":"m","request_type":"frobnicate"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.ev)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tt.want {
				t.Errorf("got %s, want %s", b, tt.want)
			}
		})
	}
	if ev := NewError(CodeRateLimited, "message"); ev.Type != "error" || ev.Message != CodeRateLimited.Message() || ev.RequestType != "message" {
		t.Errorf("NewError = %+v", ev)
	}
}
