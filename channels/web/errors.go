package web

import "errors"

// ErrInvalidJSON means a client frame is not UTF-8 JSON holding one object.
// The transport answers with CodeInvalidJSON and keeps the connection.
var ErrInvalidJSON = errors.New("web: frame is not a JSON object")

// ErrFieldType means a known field of a client frame has the wrong JSON type
// or appears twice. It comes wrapped in a *FieldError naming the field; the
// transport answers CodeBadRequest (CodeInvalidJSON for "type") and keeps
// the connection.
var ErrFieldType = errors.New("web: frame field has the wrong type")

// ErrInvalidField means a field of a client frame holds a value the
// protocol does not allow (too long, characters outside its alphabet, a NUL
// byte). It comes wrapped in a *FieldError naming the field; the transport
// answers CodeBadRequest and keeps the connection.
var ErrInvalidField = errors.New("web: frame field is invalid")

// ErrMissingType means a client frame has no non-empty string "type". The
// transport answers with CodeInvalidJSON and keeps the connection.
var ErrMissingType = errors.New("web: frame has no \"type\" field")

// ErrAuthTokenRequired means the server was asked to listen on a non-loopback
// host without an auth token. Set silas.channels.web.auth_token, or bind to
// 127.0.0.1.
var ErrAuthTokenRequired = errors.New("web: a non-loopback host requires silas.channels.web.auth_token")

// ErrInvalidOptions means Options failed validation; the wrapped message says
// which field to fix.
var ErrInvalidOptions = errors.New("web: invalid options")

// ErrServerClosed means Listen was called after Shutdown, or twice.
var ErrServerClosed = errors.New("web: server closed or already listening")
