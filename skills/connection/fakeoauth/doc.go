// Package fakeoauth is a test double of an OAuth 2.0 authorization server
// and a tiny API behind it, speaking the real wire protocols over HTTP on
// 127.0.0.1, so connection skills' scripts (and the ConnectionManager that
// runs them) can be tested end to end from any package without reaching
// a real service.
//
// It implements:
//   - the device authorization grant (RFC 8628): POST /device/code, then
//     POST /token with grant_type urn:ietf:params:oauth:grant-type:device_code,
//     answering authorization_pending, slow_down (a poll sooner than the
//     interval; the interval then grows by 5 seconds), access_denied and
//     expired_token until the grant is approved;
//   - the authorization code grant with PKCE (RFC 6749 4.1, RFC 7636, S256
//     only, loopback redirect URIs of RFC 8252): GET /authorize redirects
//     302 to the redirect URI with code and state; POST /token with
//     grant_type authorization_code checks the code_verifier;
//   - the refresh token grant, rotating both tokens;
//   - an API: GET /api/user with a bearer token answers {"login": ...},
//     GET /api/key-check checks an API key header, and /api/echo returns
//     the request's method and JSON body. Every token or key the API is
//     shown is recorded (SeenTokens).
//
// Tests steer it with controls (ApproveAfter, Approve, Deny,
// DenyAuthorization, Revoke) and read its counters (TokenRequests, Polls).
// Everything secret it hands out is listed by Secrets, so a test can scan
// output for credentials. It is for tests only: codes and tokens are
// random, but nothing is persisted and there is no client authentication
// beyond the client id (public clients).
package fakeoauth
