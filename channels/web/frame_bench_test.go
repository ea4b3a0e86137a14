package web

import (
	"encoding/json"
	"testing"

	"github.com/silas-ai/silas/messages"
)

var benchFrames = []struct {
	name  string
	frame []byte
}{
	{"message", []byte(`{"type":"message","text":"What's on my calendar tomorrow afternoon? Anything I should prepare for?","sender_id":"customer-4821","message_id":"6f1c2b9e-8a43-4c1e-9d0b-2f7a4c8e1d55"}`)},
	{"signed", []byte(`{"type":"message","text":"deploy the staging branch","timestamp":"2025-06-01T12:00:00Z","nonce":"b64nonce-2f7a4c8e","signature":"Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4"}`)},
	{"batch_review", []byte(`{"type":"batch_review_response","request_id":"r-1","verdict":"edit_selection","selected_item_ids":["a","b","c"]}`)},
}

func BenchmarkDecodeFrame(b *testing.B) {
	for _, bf := range benchFrames {
		b.Run(bf.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bf.frame)))
			for b.Loop() {
				if _, err := DecodeFrame(bf.frame); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDecodeFrameStdlib is the encoding/json baseline DecodeFrame
// replaces (without its stricter checks).
func BenchmarkDecodeFrameStdlib(b *testing.B) {
	for _, bf := range benchFrames {
		b.Run(bf.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bf.frame)))
			for b.Loop() {
				var f messages.Frame
				if err := json.Unmarshal(bf.frame, &f); err != nil {
					b.Fatal(err)
				}
				f.Raw = append([]byte(nil), bf.frame...)
			}
		})
	}
}
