// Package cli is the CLI channel (spec 8.4): the `silas chat` client. It is
// a development and debugging tool that speaks the web channel's WebSocket
// protocol (spec 8.1) to a running `silas serve`, reading chat lines from
// standard input and printing answers; approval requests are answered with
// a y/N prompt under the plan's card, which shows every field the approval
// token signs (plancard.go).
//
// The conversation runs in lockstep: after sending a line, the client reads
// the next one only once the server has answered (a "message" or "error"
// event whose reply_to is the sent message_id, or that has no reply_to), so
// that piped input such as `printf 'deploy\ny\n' | silas chat` answers the
// approval prompt rather than racing it. A line typed while an approval is
// pending is its answer. At end of input, pending approvals are declined and
// the client waits for the outstanding answer before closing.
//
// Connection cards (spec 5.10, conncard.go) queue with the approvals: a
// "Connect to ...?" card is answered y/N, a device-code or browser sign-in
// card d/t/c (done, trouble, cancel), a failure card by the number of a
// recovery option or s (skip), a permission card a/o/d (approve, just this
// once, deny); an empty line takes the capital choice. A secure-input card
// never takes the secret: it shows the `silas connections secret <ref_id>`
// command (a no-echo prompt in another terminal) and sends nothing but
// "cancel"; any other line is dropped unsent. After /connect, an approved
// "Connect" card or a "done", the next chat line waits for the
// connection's next card or status, and at end of input pending cards get
// their safe answer (decline, cancel, skip, deny).
//
// What the client expects of the server, beyond spec 8.1: answers and
// errors carry reply_to = the client's message_id; the server closes with
// code 4001 when the auth message is missing or wrong.
package cli
