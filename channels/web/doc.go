// Package web is the transport of Silas's web channel (spec 8.1): an HTTP
// server on fasthttp that serves the health and metrics endpoints, optional
// static assets and extra routes, and the JSON-over-WebSocket protocol on
// /ws (owner) and /chat (chatbot customers).
//
// The package is transport only. It upgrades sockets (refusing cross-origin
// upgrades, never reading tokens from the query string), decodes and
// validates client frames (a bad field is bad_request naming it), enforces
// the frame size limit and the per-IP message rate, and queues server events
// with a bounded, never-blocking send queue. Everything about sessions
// (authentication, scopes, turns) belongs to the messages.Conn that a
// messages.Gateway attaches to each socket; the frame and event types are
// package messages' protocol, which every channel shares.
//
// It also holds the server up against the open internet: every route
// answers only allowed Host names (DNS rebinding); sockets are counted in
// three pools with caps of their own, in total and per client IP
// (customers on /chat, /ws sockets before their auth frame, and the owner's,
// recognised by the owner token so that customers cannot crowd the owner
// out); customer sockets that never send a message are closed after an idle
// timeout; clients that trickle headers or bodies are cut off; the client IP
// comes from X-Forwarded-For only behind a trusted proxy; /metrics and pprof
// want a bearer token.
//
// Every goroutine the package runs (the accept loop, one reader and one
// writer per socket) is tracked, so Shutdown returns only when they are gone.
package web
