// Package embed turns texts into vectors for semantic memory search
// (spec 6.2).
//
// [Embedder] is what the memory retriever and the vector writer need; its
// default implementation, [Client], posts to an OpenAI-compatible
// {base_url}/embeddings endpoint (OpenAI, OpenRouter, a local llama.cpp or
// Ollama server, vLLM, or the bench mock server), configured by
// silas.memory.embedding_model as "<provider>:<model id>" in the same
// providers as the chat models. [Breaker] wraps an Embedder so that an
// outage costs a few failed calls, not a timeout on every turn: callers then
// fall back to keyword search.
//
// Every vector an Embedder returns has unit length, so cosine similarity is
// a dot product and vectors of different texts compare on direction only.
//
// The package starts no goroutines (net/http keeps its connection pool) and
// holds no actor references.
package embed
