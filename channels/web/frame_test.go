package web

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/silas-ai/silas/messages"
)

func TestDecodeFrame(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    *messages.Frame
		wantErr error
	}{
		{
			name: "auth",
			in:   `{"type":"auth","token":"s3cret"}`,
			want: &messages.Frame{Type: "auth", Token: "s3cret"},
		},
		{
			name: "message with whitespace and unknown fields",
			in:   " {\n\t\"type\" : \"message\", \"x\": {\"a\":[1,-2.5e+3,true,null,{}]}, \"text\":\"hi\", \"sender_id\":\"u1\" } \r\n",
			want: &messages.Frame{Type: "message", Text: "hi", SenderID: "u1"},
		},
		{
			name: "every field",
			in: `{"type":"t","token":"a","session_token":"b","text":"c","message_id":"d","sender_id":"e",` +
				`"request_id":"f","verdict":"g","selected_item_ids":["h","i"],"edited_text":"j",` +
				`"selected_value":"k","freetext":"l","ref_id":"m","success":true,"step_type":"n",` +
				`"action":"o","selected_action":"p","signature":"q","nonce":"r","timestamp":"s"}`,
			want: &messages.Frame{Type: "t", Token: "a", SessionToken: "b", Text: "c", MessageID: "d", SenderID: "e",
				RequestID: "f", Verdict: "g", SelectedItemIDs: []string{"h", "i"}, EditedText: "j",
				SelectedValue: "k", Freetext: "l", RefID: "m", Success: true, StepType: "n",
				Action: "o", SelectedAction: "p", Signature: "q", Nonce: "r", Timestamp: "s"},
		},
		{
			name: "escapes and surrogates",
			in:   `{"type":"message","text":"a\"b\\c\/d\b\f\n\r\t\u00e9\ud83d\ude00\ud800x\udc00"}`,
			want: &messages.Frame{Type: "message", Text: "a\"b\\c/d\b\f\n\r\té😀\uFFFDx\uFFFD"},
		},
		{
			name: "escaped key matches",
			in:   `{"t\u0079pe":"auth"}`,
			want: &messages.Frame{Type: "auth"},
		},
		{
			name: "null values are absent",
			in:   `{"type":"message","text":null,"success":null,"selected_item_ids":null}`,
			want: &messages.Frame{Type: "message"},
		},
		{
			name: "empty list and null element",
			in:   `{"type":"batch_review_response","selected_item_ids":[],"x":[]}`,
			want: &messages.Frame{Type: "batch_review_response", SelectedItemIDs: []string{}},
		},
		{
			name: "null list element becomes empty string",
			in:   `{"type":"t","selected_item_ids":["a",null]}`,
			want: &messages.Frame{Type: "t", SelectedItemIDs: []string{"a", ""}},
		},
		{
			name: "success false",
			in:   `{"type":"secure_input_completed","ref_id":"r","success":false}`,
			want: &messages.Frame{Type: "secure_input_completed", RefID: "r"},
		},
		{
			name: "keys are case-sensitive",
			in:   `{"type":"message","Text":"ignored","TYPE":"x"}`,
			want: &messages.Frame{Type: "message"},
		},
		{name: "empty input", in: ``, wantErr: ErrInvalidJSON},
		{name: "not an object", in: `["type"]`, wantErr: ErrInvalidJSON},
		{name: "string top level", in: `"x"`, wantErr: ErrInvalidJSON},
		{name: "truncated", in: `{"type":"auth"`, wantErr: ErrInvalidJSON},
		{name: "trailing data", in: `{"type":"auth"} {}`, wantErr: ErrInvalidJSON},
		{name: "trailing comma", in: `{"type":"auth",}`, wantErr: ErrInvalidJSON},
		{name: "single quotes", in: `{'type':'auth'}`, wantErr: ErrInvalidJSON},
		{name: "unterminated string", in: `{"type":"auth`, wantErr: ErrInvalidJSON},
		{name: "raw control char", in: "{\"type\":\"a\nb\"}", wantErr: ErrInvalidJSON},
		{name: "bad escape", in: `{"type":"a\x"}`, wantErr: ErrInvalidJSON},
		{name: "bad unicode escape", in: `{"type":"a\u12g4"}`, wantErr: ErrInvalidJSON},
		{name: "leading zero", in: `{"type":"a","x":01}`, wantErr: ErrInvalidJSON},
		{name: "bare minus", in: `{"type":"a","x":-}`, wantErr: ErrInvalidJSON},
		{name: "bad literal", in: `{"type":"a","x":tru}`, wantErr: ErrInvalidJSON},
		{name: "bad null in string field", in: `{"type":"a","text":nul}`, wantErr: ErrInvalidJSON},
		{name: "invalid UTF-8", in: "{\"type\":\"\xff\"}", wantErr: ErrInvalidJSON},
		{name: "too deep", in: `{"type":"a","x":` + strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1) + `}`, wantErr: ErrInvalidJSON},
		{name: "missing type", in: `{"text":"hi"}`, wantErr: ErrMissingType},
		{name: "empty type", in: `{"type":""}`, wantErr: ErrMissingType},
		{name: "null type", in: `{"type":null}`, wantErr: ErrMissingType},
		{name: "empty object", in: `{}`, wantErr: ErrMissingType},
		{name: "numeric type", in: `{"type":1}`, wantErr: ErrFieldType},
		{name: "numeric text", in: `{"type":"message","text":5}`, wantErr: ErrFieldType},
		{name: "string success", in: `{"type":"a","success":"true"}`, wantErr: ErrFieldType},
		{name: "string list", in: `{"type":"a","selected_item_ids":"x"}`, wantErr: ErrFieldType},
		{name: "number in list", in: `{"type":"a","selected_item_ids":[1]}`, wantErr: ErrFieldType},
		{name: "duplicate type", in: `{"type":"auth","type":"message"}`, wantErr: ErrFieldType},
		{name: "duplicate via escape", in: `{"type":"auth","typ\u0065":"message"}`, wantErr: ErrFieldType},
		{name: "duplicate with null", in: `{"type":"a","text":null,"text":"x"}`, wantErr: ErrFieldType},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeFrame([]byte(tt.in))
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				if got != nil {
					t.Errorf("frame = %+v, want nil on error", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if string(got.Raw) != tt.in {
				t.Errorf("Raw = %q, want the input", got.Raw)
			}
			got.Raw = nil
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestDecodeFrameRawIsACopy(t *testing.T) {
	in := []byte(`{"type":"message","text":"hi"}`)
	f, err := DecodeFrame(in)
	if err != nil {
		t.Fatal(err)
	}
	for i := range in {
		in[i] = 'x'
	}
	if f.Text != "hi" || string(f.Raw) != `{"type":"message","text":"hi"}` {
		t.Errorf("frame changed with its input buffer: text=%q raw=%q", f.Text, f.Raw)
	}
}

func TestDecodeFrameErrorsDoNotQuoteContent(t *testing.T) {
	secret := "hunter2-secret"
	for _, in := range []string{
		`{"type":"auth","token":"` + secret + `\q"}`,
		`{"type":"auth","token":"` + secret + `",}`,
		`{"type":"auth","token":"` + secret + `","success":"` + secret + `"}`,
		`{"` + secret + `":1,}`,
	} {
		_, err := DecodeFrame([]byte(in))
		if err == nil {
			t.Fatalf("%s: expected an error", in)
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("error %q quotes frame content", err)
		}
	}
}
