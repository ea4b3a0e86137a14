// Package llm is the engine that talks to language-model providers.
//
// It holds the provider-neutral request and response values ([Request],
// [Response]), an OpenAI-compatible HTTP client ([Client]) that works with
// OpenRouter, OpenAI, llama.cpp, Ollama or the bench mock server, the role
// tiers that map proxy, planner, executor and scorer to chains of models
// tried in order, with a circuit breaker per provider and a price table for
// providers that report no cost ([Router]), the structured-output wrapper of spec 5.1.0 ([RunStructured]) with the JSON
// Schemas it sends ([Schema], [Format]), and a scripted provider for tests
// ([Scripted]).
//
// The package starts no goroutines of its own (net/http keeps its connection
// pool) and holds no actor references: actors call it from their worker
// goroutines and get values back.
package llm
