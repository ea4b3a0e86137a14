package embed

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/silas-ai/silas/runtime/llm"
)

// fakeServer is an embeddings endpoint whose answer the test picks.
type fakeServer struct {
	mu     sync.Mutex
	reqs   []embedRequest
	auth   []string
	answer func(req embedRequest) (int, string)
}

func newFake(t *testing.T, answer func(req embedRequest) (int, string)) (*fakeServer, *httptest.Server) {
	t.Helper()
	f := &fakeServer{answer: answer}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/embeddings" || r.Method != http.MethodPost {
			http.Error(w, "wrong path "+r.URL.Path, http.StatusNotFound)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var req embedRequest
		if err := json.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		f.reqs = append(f.reqs, req)
		f.auth = append(f.auth, r.Header.Get("Authorization"))
		f.mu.Unlock()
		status, out := f.answer(req)
		w.WriteHeader(status)
		_, _ = io.WriteString(w, out)
	}))
	t.Cleanup(srv.Close)
	return f, srv
}

// vectors answers each input i with the vector (i+1, 1, 0), reversed in
// order, as a server may.
func vectors(req embedRequest) (int, string) {
	var data []string
	for i := len(req.Input) - 1; i >= 0; i-- {
		data = append(data, fmt.Sprintf(`{"object":"embedding","index":%d,"embedding":[%d,1,0]}`, i, i+1))
	}
	return 200, `{"object":"list","data":[` + strings.Join(data, ",") + `],"model":"m"}`
}

func TestClientEmbedsInOrderNormalizedAndBatched(t *testing.T) {
	f, srv := newFake(t, vectors)
	c := NewClient(ClientOptions{Provider: "local", BaseURL: srv.URL + "/v1/", Model: "mini", MaxBatch: 2})
	texts := []string{"a", "b", "c", "   "}
	got, err := c.Embed(t.Context(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 {
		t.Fatalf("got %d vectors", len(got))
	}
	for i, v := range got {
		want := float32(i%2+1) / float32(math.Sqrt(float64((i%2+1)*(i%2+1)+1)))
		if math.Abs(float64(v[0]-want)) > 1e-6 {
			t.Errorf("vector %d = %v, want first value %v (in order, unit length)", i, v, want)
		}
	}
	if len(f.reqs) != 2 {
		t.Fatalf("%d requests for 4 texts in batches of 2", len(f.reqs))
	}
	r := f.reqs[1]
	if r.Model != "mini" || r.EncodingFormat != "float" || r.Dimensions != 0 || r.Input[1] != "(empty)" {
		t.Errorf("request = %+v", r)
	}
	if f.auth[0] != "" {
		t.Errorf("a keyless provider sent Authorization %q", f.auth[0])
	}
	if c.Model() != "local:mini" {
		t.Errorf("Model() = %q", c.Model())
	}
}

func TestClientSendsKeyAndDimensions(t *testing.T) {
	f, srv := newFake(t, func(req embedRequest) (int, string) {
		return 200, `{"data":[{"index":0,"embedding":[0,3,4]}]}`
	})
	c := NewClient(ClientOptions{Provider: "openai", BaseURL: srv.URL + "/v1", APIKey: "sk-1", APIKeyEnv: "K", Model: "te3", Dimensions: 3})
	got, err := c.Embed(t.Context(), []string{strings.Repeat("é", 3000)})
	if err != nil {
		t.Fatal(err)
	}
	if got[0][1] != 0.6 || got[0][2] != 0.8 {
		t.Errorf("vector = %v, want unit length", got[0])
	}
	if f.auth[0] != "Bearer sk-1" || f.reqs[0].Dimensions != 3 {
		t.Errorf("auth %q, dimensions %d", f.auth[0], f.reqs[0].Dimensions)
	}
	if n := len([]rune(f.reqs[0].Input[0])); n != DefaultMaxInputRunes {
		t.Errorf("sent %d characters, want the first %d", n, DefaultMaxInputRunes)
	}
	if c.Model() != "openai:te3/3" {
		t.Errorf("Model() = %q", c.Model())
	}
}

func TestClientRefusesBadAnswers(t *testing.T) {
	tests := []struct {
		name      string
		status    int
		body      string
		dims      int
		wantErr   error
		retryable bool
		mention   string
	}{
		{"not json", 200, `<html>`, 0, ErrInvalidResponse, true, "decode"},
		{"too few", 200, `{"data":[]}`, 0, ErrInvalidResponse, true, "0 embeddings for 1"},
		{"index out of range", 200, `{"data":[{"index":3,"embedding":[1]}]}`, 0, ErrInvalidResponse, true, "index 3"},
		{"wrong size", 200, `{"data":[{"index":0,"embedding":[1,2]}]}`, 3, ErrInvalidResponse, true, "silas.memory.embedding_dim"},
		{"zero vector", 200, `{"data":[{"index":0,"embedding":[0,0]}]}`, 0, ErrInvalidResponse, true, "no length"},
		{"outage", 503, `{"error":{"message":"down, key sk-secret"}}`, 0, nil, true, "HTTP 503"},
		{"bad model", 404, `{"error":{"message":"no such model"}}`, 0, nil, false, "HTTP 404"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, srv := newFake(t, func(embedRequest) (int, string) { return tt.status, tt.body })
			c := NewClient(ClientOptions{Provider: "p", BaseURL: srv.URL + "/v1", APIKey: "sk-secret", Model: "m", Dimensions: tt.dims})
			_, err := c.Embed(t.Context(), []string{"x"})
			if err == nil {
				t.Fatal("no error")
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("err = %v, want %v", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), "sk-secret") {
				t.Errorf("the API key leaked into the error: %v", err)
			}
			if !strings.Contains(err.Error(), tt.mention) {
				t.Errorf("err = %v, want it to mention %q", err, tt.mention)
			}
			var api *llm.APIError
			if tt.status >= 400 && !errors.As(err, &api) {
				t.Errorf("err = %v, want an *llm.APIError", err)
			}
			if tt.status >= 400 && Retryable(err) != tt.retryable {
				t.Errorf("Retryable = %v, want %v", Retryable(err), tt.retryable)
			}
		})
	}
}

func TestClientMissingKey(t *testing.T) {
	c := NewClient(ClientOptions{Provider: "openai", BaseURL: "https://api.example.com/v1", APIKeyEnv: "OPENAI_API_KEY", Model: "m"})
	_, err := c.Embed(t.Context(), []string{"x"})
	if !errors.Is(err, ErrMissingAPIKey) || !strings.Contains(err.Error(), "OPENAI_API_KEY") || Retryable(err) {
		t.Fatalf("err = %v", err)
	}
	// A loopback server with api_key_env set but empty is called anyway,
	// without a key: a local server needs none.
	f, srv := newFake(t, vectors)
	c = NewClient(ClientOptions{Provider: "local", BaseURL: srv.URL + "/v1", APIKeyEnv: "UNSET_KEY", Model: "m"})
	if _, err := c.Embed(t.Context(), []string{"x"}); err != nil || f.auth[0] != "" {
		t.Fatalf("loopback without key: %v, auth %q", err, f.auth)
	}
}
