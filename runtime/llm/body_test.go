package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestSegReaderReadsEveryByteOnce: whatever the caller's buffer size, and
// through WriteTo, the pieces come out whole and in order.
func TestSegReaderReadsEveryByteOnce(t *testing.T) {
	body := requestBody{}
	for _, s := range []string{`{"a":`, "", `"` + strings.Repeat("x", 5000) + `"`, `,"b":1`, "}"} {
		body.add(s)
	}
	want := `{"a":"` + strings.Repeat("x", 5000) + `","b":1}`
	if body.size != len(want) {
		t.Fatalf("size %d, want %d", body.size, len(want))
	}
	for _, n := range []int{1, 7, 4096, 1 << 16} {
		var got bytes.Buffer
		r, buf := body.reader(), make([]byte, n)
		for {
			k, err := r.Read(buf)
			got.Write(buf[:k])
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if got.String() != want {
			t.Fatalf("read with a %d-byte buffer: %d bytes, want %d", n, got.Len(), len(want))
		}
	}
	var w bytes.Buffer
	if _, err := io.Copy(&w, body.reader()); err != nil || w.String() != want {
		t.Fatalf("WriteTo: %v, %d bytes", err, w.Len())
	}
}

// TestRetrySendsTheSplicedBodyAgain: a prompt that arrives encoded is sent
// whole, with its length, on the first attempt and again on the retry after
// a 503, and both bodies decode to the prompt.
func TestRetrySendsTheSplicedBodyAgain(t *testing.T) {
	prompt := strings.Repeat("a \"quoted\" line\n", 3000)
	enc, _ := json.Marshal(prompt)
	var mu sync.Mutex
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil || r.ContentLength != int64(len(b)) {
			t.Errorf("body: %v, content length %d for %d bytes", err, r.ContentLength, len(b))
		}
		mu.Lock()
		bodies = append(bodies, string(b))
		first := len(bodies) == 1
		mu.Unlock()
		if first {
			http.Error(w, "try again", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"choices":[{"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`)
	}))
	defer srv.Close()
	c := NewClient(ClientOptions{Name: "local", BaseURL: srv.URL, MaxRetries: 1,
		Sleep: func(context.Context, time.Duration) error { return nil }})
	req := &Request{Model: "m", Messages: []Message{
		{Role: RoleSystem, Content: "be brief"},
		{Role: RoleUser, Quoted: []string{string(enc[:100]), string(enc[100:])}},
	}}
	if _, err := c.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if len(bodies) != 2 || bodies[0] != bodies[1] {
		t.Fatalf("%d bodies, equal: %v", len(bodies), len(bodies) == 2 && bodies[0] == bodies[1])
	}
	var got struct {
		Messages []struct{ Content string } `json:"messages"`
	}
	if err := json.Unmarshal([]byte(bodies[1]), &got); err != nil || len(got.Messages) != 2 || got.Messages[1].Content != prompt {
		t.Fatalf("body does not carry the prompt: %v", err)
	}
}
