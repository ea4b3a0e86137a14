package main

import (
	"os"

	"github.com/silas-ai/silas/config"
	"github.com/silas-ai/silas/runtime/embed"
)

// newEmbedder builds the embedder of silas.memory.embedding_model, behind
// a circuit breaker, or nil when semantic memory is off. Like the chat
// models, a missing API key is not an error here: calls fail with a
// message naming the variable, and memory search falls back to keywords.
func newEmbedder(cfg *config.Config) embed.Embedder {
	ref := cfg.Memory.EmbeddingModel
	if ref == "" {
		return nil
	}
	p, model, err := cfg.ResolveModel(ref)
	if err != nil {
		return nil // config validation refuses this
	}
	name, _, _ := config.ParseModelRef(ref)
	key := ""
	if p.APIKeyEnv != "" {
		key = os.Getenv(p.APIKeyEnv)
	}
	c := embed.NewClient(embed.ClientOptions{
		Provider: name, BaseURL: p.BaseURL, APIKey: key, APIKeyEnv: p.APIKeyEnv,
		Model: model, Dimensions: cfg.Memory.EmbeddingDim, Timeout: cfg.LLM.Timeout(),
	})
	return embed.NewBreaker(c, 0, 0, nil)
}
