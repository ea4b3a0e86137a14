// Package ownerapi is the daemon's owner HTTP API: the endpoints the PWA
// and the `silas` CLI use besides the WebSocket (devices, secure input,
// the activity feed, UX metrics, pending approvals, skills, connections,
// goals, security keys, backup) and the persona endpoints that owner and chatbot customers share.
// docs/owner-api.md documents the paths, bodies and answers.
//
// New takes what the handlers need (Deps) and Routes hands the web
// channel its extra routes, keyed "METHOD /path/prefix" as
// web.Options.Extra expects. Every route but the persona ones sits behind
// the owner gate: the owner token as a bearer token passes, a chatbot
// customer's session token is refused with 403 and anything else with 401.
// Every error answer is the web channel's error event, so HTTP and
// WebSocket clients read one error shape with one table of codes.
//
// The package holds no state of its own besides DeviceRegistry, the
// in-memory set of active device keys that the device endpoints change and
// the signature check reads.
package ownerapi
