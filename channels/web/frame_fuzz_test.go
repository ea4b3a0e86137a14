package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"testing"
	"unicode/utf8"

	"github.com/silas-ai/silas/messages"
)

// referenceDecode decodes a frame with encoding/json under DecodeFrame's
// rules (exact key match, duplicates of known keys rejected, UTF-8 required).
// It is slow and obviously right, so FuzzDecodeFrame can compare against it.
func referenceDecode(b []byte) (*messages.Frame, error) {
	if !utf8.Valid(b) || !json.Valid(b) {
		return nil, ErrInvalidJSON
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, ErrInvalidJSON
	}
	f := &messages.Frame{}
	seen := map[field]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		k := fieldOf(key)
		if k == fieldUnknown {
			continue
		}
		if seen[k] {
			return nil, ErrFieldType
		}
		seen[k] = true
		if k == fieldConfirmation {
			switch {
			case string(raw) == "null":
				f.Confirmation = nil
			case raw[0] == '{':
				f.Confirmation = raw
			default:
				return nil, ErrFieldType
			}
			continue
		}
		var target any
		switch k {
		case fieldSuccess:
			target = &f.Success
		case fieldSelectedItemIDs:
			target = &f.SelectedItemIDs
		default:
			target = stringField(f, k)
		}
		if err := json.Unmarshal(raw, target); err != nil {
			return nil, ErrFieldType
		}
	}
	if _, err := dec.Token(); err != nil { // closing brace
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, ErrInvalidJSON
	}
	if f.Type == "" {
		return nil, ErrMissingType
	}
	f.Raw = append([]byte(nil), b...)
	return f, nil
}

// FuzzDecodeFrame checks DecodeFrame against referenceDecode: both accept
// the same inputs, decode them to the same Frame, and never panic.
func FuzzDecodeFrame(f *testing.F) {
	for _, seed := range []string{
		`{"type":"auth","token":"abc"}`,
		`{"type":"message","text":"hello \u00e9 \ud83d\ude00","sender_id":"u","x":{"y":[1,2.5e-3,-0,true,false,null]}}`,
		`{"type":"batch_review_response","request_id":"r","verdict":"edit_selection","selected_item_ids":["a","b",null]}`,
		`{"type":"secure_input_completed","ref_id":"r","success":true}`,
		`{"type":"message","text":"hi","signature":"c2ln","nonce":"n","timestamp":"2025-01-01T00:00:00Z"}`,
		`{"t\u0079pe":"auth"}`,
		`{"type":"a","type":"b"}`,
		`{"type":"\ud800\u0041"}`,
		`{"type":"a","text":5}`,
		`{"type":"a"} x`,
		`[]`,
		`{"type":"a","n":01}`,
		"{\"type\":\"\xff\"}",
		` { } `,
		`{"type":"a","selected_item_ids":[]}`,
		`{"type":"a","selected_item_ids":null}`,
		`{"type":"approval_response","request_id":"r","verdict":"approved","confirmation":{"method":"slide"}}`,
		`{"type":"approval_response","confirmation":{"method":"webauthn","assertion":{"id":"x","response":{"a":[1,{}]}}}}`,
		`{"type":"a","confirmation":null}`,
		`{"type":"a","confirmation":"slide"}`,
		`{"type":"a","confirmation":{},"confirmation":{}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := DecodeFrame(b)
		want, wantErr := referenceDecode(b)
		if err != nil {
			if got != nil {
				t.Fatalf("non-nil frame with error %v", err)
			}
			if wantErr == nil {
				if errors.Is(err, ErrInvalidJSON) && bytes.Count(b, []byte("["))+bytes.Count(b, []byte("{")) > maxDepth {
					return // nesting limit: stricter than encoding/json on purpose
				}
				t.Fatalf("DecodeFrame(%q) = %v; reference accepted it as %+v", b, err, want)
			}
			return
		}
		if wantErr != nil {
			t.Fatalf("DecodeFrame(%q) accepted it as %+v; reference error %v", b, got, wantErr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("DecodeFrame(%q):\n got %+v\nwant %+v", b, got, want)
		}
	})
}
