package config

import (
	"errors"
	"math"
	"testing"
)

func TestValidateEmbeddingsRefuses(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(m *Memory)
		want   []string
	}{
		{"model without provider (the old default)", func(m *Memory) { m.EmbeddingModel = "all-MiniLM-L6-v2" },
			[]string{"silas.memory.embedding_model", `"<provider>:<model id>"`, `"all-MiniLM-L6-v2"`, "keywords only"}},
		{"unknown provider", func(m *Memory) { m.EmbeddingModel = "ollama:all-minilm" },
			[]string{"silas.memory.embedding_model", `provider "ollama" is not configured`, "silas.providers.ollama", "openrouter"}},
		{"empty model id", func(m *Memory) { m.EmbeddingModel = "openrouter:" }, []string{"silas.memory.embedding_model"}},
		{"surrounding space", func(m *Memory) { m.EmbeddingModel = " openrouter:m" }, []string{"silas.memory.embedding_model"}},
		{"negative dim", func(m *Memory) { m.EmbeddingDim = -1 }, []string{"silas.memory.embedding_dim", "between 0", "-1"}},
		{"huge dim", func(m *Memory) { m.EmbeddingDim = 100000 }, []string{"silas.memory.embedding_dim", "8192"}},
		{"negative similarity", func(m *Memory) { m.SemanticMinSimilarity = -0.1 }, []string{"silas.memory.semantic_min_similarity", "-0.1"}},
		{"similarity 1", func(m *Memory) { m.SemanticMinSimilarity = 1 }, []string{"silas.memory.semantic_min_similarity", "below 1"}},
		{"similarity NaN", func(m *Memory) { m.SemanticMinSimilarity = math.NaN() }, []string{"silas.memory.semantic_min_similarity"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := mustLoad(t, LoadOptions{})
			c.mutate(&cfg.Memory)
			err := cfg.Validate()
			wantErr(t, err, c.want...)
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("err does not wrap ErrInvalid: %v", err)
			}
		})
	}
}

func TestValidateEmbeddingsAccepts(t *testing.T) {
	cfg := mustLoad(t, LoadOptions{})
	if cfg.Memory.EmbeddingModel != "" || cfg.Memory.EmbeddingDim != 0 || cfg.Memory.SemanticMinSimilarity != 0.3 {
		t.Fatalf("defaults: %+v", cfg.Memory)
	}
	cfg = mustLoad(t, LoadOptions{Environ: []string{}, Overrides: map[string]any{
		"silas.providers.local.base_url":       "http://127.0.0.1:11434/v1",
		"silas.memory.embedding_model":         "local:all-minilm:latest",
		"silas.memory.embedding_dim":           384,
		"silas.memory.semantic_min_similarity": 0,
	}})
	if cfg.Memory.EmbeddingModel != "local:all-minilm:latest" || cfg.Memory.EmbeddingDim != 384 {
		t.Fatalf("loaded %+v", cfg.Memory)
	}
}
