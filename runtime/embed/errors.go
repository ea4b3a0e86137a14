package embed

import "errors"

// ErrUnavailable means the embedding provider is not called for now: its
// recent calls failed and the [Breaker]'s cool-down has not ended. Callers
// search by keyword meanwhile and try again later; nothing is lost.
var ErrUnavailable = errors.New("embed: embedding provider unavailable after repeated failures")

// ErrInvalidResponse means the provider answered with something that is not
// a list of usable vectors (not JSON, the wrong count, a vector of the
// wrong size, non-finite or all-zero values). If it persists, check the
// provider's base_url and silas.memory.embedding_model and embedding_dim.
var ErrInvalidResponse = errors.New("embed: provider response is not a list of embeddings")

// ErrMissingAPIKey means the provider needs an API key and has none; the
// error's text names the environment variable to set.
var ErrMissingAPIKey = errors.New("embed: missing API key")
