package config

import (
	"math"
	"strings"
)

// maxEmbeddingDim bounds silas.memory.embedding_dim (the largest common
// embedding models have 3,072 dimensions).
const maxEmbeddingDim = 8192

// validateEmbeddings checks the semantic memory keys: the embedding model
// names a configured provider, the size and the similarity floor are in
// range.
func (c *Config) validateEmbeddings(p *problems) {
	m := c.Memory
	if ref := m.EmbeddingModel; ref != "" {
		provider, _, err := ParseModelRef(ref)
		switch {
		case err != nil || strings.TrimSpace(ref) != ref:
			p.add("memory.embedding_model", `must be "<provider>:<model id>" of a provider serving OpenAI-compatible /embeddings, e.g. "openai:text-embedding-3-small", or "" to search memory by keywords only; got %q`, ref)
		default:
			if _, ok := c.Providers[provider]; !ok {
				p.add("memory.embedding_model", "provider %q is not configured; add silas.providers.%s with base_url (and api_key_env unless the server needs no key), or use one of: %s",
					provider, provider, strings.Join(sortedNames(c.Providers), ", "))
			}
		}
	}
	if m.EmbeddingDim < 0 || m.EmbeddingDim > maxEmbeddingDim {
		p.add("memory.embedding_dim", "must be between 0 (the model's own size) and %d, got %d", maxEmbeddingDim, m.EmbeddingDim)
	}
	if s := m.SemanticMinSimilarity; math.IsNaN(s) || s < 0 || s >= 1 {
		p.add("memory.semantic_min_similarity", "must be at least 0 and below 1 (a cosine similarity), got %s", num(s))
	}
}
