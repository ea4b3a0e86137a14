package web

import (
	"fmt"
	"unicode/utf8"

	"github.com/silas-ai/silas/messages"
)

// maxDepth bounds the nesting of unknown values a frame may carry.
const maxDepth = 64

// DecodeFrame decodes one client frame. The frame must be valid UTF-8 holding
// one JSON object with a non-empty string "type". Field names match exactly
// (case-sensitive); a known field that appears twice, or holds the wrong JSON
// type, is an error, so that nobody downstream can read a frame differently.
// Errors wrap ErrInvalidJSON, ErrFieldType or ErrMissingType and never quote
// the frame's content.
//
// DecodeFrame makes three allocations for a typical frame (the Frame, Raw
// and one string holding every field value), plus one per string that
// contains escapes and one for SelectedItemIDs.
func DecodeFrame(b []byte) (*messages.Frame, error) {
	if !utf8.Valid(b) {
		return nil, fmt.Errorf("%w: frame is not valid UTF-8", ErrInvalidJSON)
	}
	f := &messages.Frame{}
	d := decoder{s: string(b)}
	if err := d.frame(f); err != nil {
		return nil, err
	}
	if f.Type == "" {
		return nil, ErrMissingType
	}
	f.Raw = append([]byte(nil), b...)
	return f, nil
}
