// Package mockllm is an OpenAI-compatible model server for integration tests
// and the load bench: a test double that speaks the real wire protocol over
// HTTP on loopback.
//
// It serves POST /v1/chat/completions (JSON, or server-sent events when the
// request has "stream": true), GET /v1/models, and POST /v1/embeddings
// with deterministic vectors in which texts that share a meaning are close
// (see [Embedding]), and answers chat completions with a
// plausible default for each structured output, chosen by
// response_format.json_schema.name:
//
//   - RouteDecision: route "direct", register "status", mode
//     "default_and_offer", context_profile "conversation", and a response
//     whose message is "Echo: " plus the first 80 characters of the last
//     user message.
//   - AgentResponse: that same response object (message, empty memory
//     queries and ops, no plan action, needs_approval false).
//   - ExecutorAgentOutput: summary "Completed: <first 80 characters>", no
//     artifact refs, no next steps.
//   - ScorerOutput: one keep group (reason "mock: keep everything", no block
//     ids) and no evict groups, which evicts nothing.
//   - any other schema name: "{}".
//   - no response_format: the plain text "Echo: <first 80 characters>".
//
// Usage is filled in: prompt tokens are the total message length divided by
// four, completion tokens the answer length divided by four, and usage.cost
// (OpenRouter's field, in USD) is 0.1 µUSD per prompt token plus 0.4 µUSD
// per completion token.
//
// Failures are injected at the rates of [Options]; tests script answers
// with [Server.Handle] or [Server.HandleReply], and read what the server saw
// with [Server.Requests] and [Server.Stats]. The server is built on fasthttp
// and keeps per-request work small, since the bench drives thousands of
// requests per second through it on the same machine as Silas.
package mockllm
