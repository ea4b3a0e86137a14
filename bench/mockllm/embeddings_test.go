package mockllm

import (
	"encoding/json"
	"math"
	"testing"
)

func cosine(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func TestEmbeddingSharedMeaningIsClose(t *testing.T) {
	fact := Embedding("My car is a red Volvo.", 0)
	question := Embedding("What vehicle do I drive?", 0)
	other := Embedding("I like green tea in the morning", 0)
	if len(fact) != DefaultEmbeddingDims {
		t.Fatalf("%d dims", len(fact))
	}
	var norm float64
	for _, x := range fact {
		norm += float64(x) * float64(x)
	}
	if math.Abs(norm-1) > 1e-5 {
		t.Fatalf("norm² = %v, want 1", norm)
	}
	if c := cosine(fact, question); c < 0.8 {
		t.Errorf("car fact vs vehicle question: cosine %.3f, want close (>= 0.8)", c)
	}
	if c := cosine(other, question); c > 0.2 {
		t.Errorf("tea vs vehicle question: cosine %.3f, want far (<= 0.2)", c)
	}
	if a, b := Embedding("same words", 32), Embedding("Same, words!", 32); cosine(a, b) < 0.9999 {
		t.Errorf("not deterministic / case-insensitive")
	}
	if v := Embedding("the a is", 8); v[0] != 1 {
		t.Errorf("stop words only: %v", v)
	}
}

func TestEmbeddingsEndpoint(t *testing.T) {
	s := start(t, Options{})
	status, _, body := call(t, s, "POST", "/embeddings", "Bearer k", `{"model":"m","input":["My car is a red Volvo","What vehicle do I drive"],"dimensions":64}`)
	if status != 200 {
		t.Fatalf("status %d: %s", status, body)
	}
	var res embeddingResponse
	if err := json.Unmarshal(body, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Data) != 2 || len(res.Data[0].Embedding) != 64 || res.Data[1].Index != 1 || res.Model != "m" {
		t.Fatalf("answer %+v", res)
	}
	if c := cosine(res.Data[0].Embedding, res.Data[1].Embedding); c < 0.8 {
		t.Errorf("cosine %.3f", c)
	}
	status, _, body = call(t, s, "POST", "/embeddings", "Bearer k", `{"model":"m","input":"one text"}`)
	if err := json.Unmarshal(body, &res); status != 200 || err != nil || len(res.Data) != 1 || len(res.Data[0].Embedding) != DefaultEmbeddingDims {
		t.Fatalf("single input: %d %s", status, body)
	}
	for _, bad := range []string{`{`, `{"input":[]}`, `{"input":5}`, `{"input":"x","dimensions":99999}`} {
		if status, _, body := call(t, s, "POST", "/embeddings", "Bearer k", bad); status != 400 {
			t.Errorf("%s: status %d %s", bad, status, body)
		}
	}
	if status, _, _ := call(t, s, "POST", "/embeddings", "", `{"input":"x"}`); status != 401 {
		t.Errorf("no key: status %d", status)
	}
	s.FailEmbeddings(503)
	if status, _, _ := call(t, s, "POST", "/embeddings", "Bearer k", `{"input":"x"}`); status != 503 {
		t.Errorf("failing: status %d", status)
	}
	s.FailEmbeddings(0)
	if status, _, _ := call(t, s, "POST", "/embeddings", "Bearer k", `{"input":"x"}`); status != 200 {
		t.Errorf("recovered: status %d", status)
	}
	if n := s.EmbeddingRequests(); n != 8 {
		t.Errorf("EmbeddingRequests = %d, want 8 (401 excluded)", n)
	}
	if n := s.EmbeddedTexts(); n != 4 {
		t.Errorf("EmbeddedTexts = %d, want 4", n)
	}
}
