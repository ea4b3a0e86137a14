// Package cli is the CLI channel (spec 8.4): the `silas chat` client. It is
// a development and debugging tool that speaks the web channel's WebSocket
// protocol (spec 8.1) to a running `silas serve`, on the shared protocol
// types of package messages: it sends messages.Frame values and decodes
// server events into their messages types. It reads chat lines from
// standard input and prints answers; approval requests are answered with
// a y/N prompt under the plan's card, which shows every field the approval
// token signs (plancard.go).
//
// The conversation runs in lockstep: after sending a line, the client reads
// the next one only once the server has answered (a "message" or "error"
// event whose reply_to is the sent message_id, or that has no reply_to), so
// that piped input such as `printf 'deploy\ny\n' | silas chat` answers the
// approval prompt rather than racing it. A line typed while an approval is
// pending is its answer. At end of input, pending approvals are declined and
// the client waits for the outstanding answer before closing. An answer to
// a failed turn (its `error` {kind, retryable}) says whether sending it
// again may help.
//
// A gate_approval (gatecard.go) shows the gate, the value it checked and
// its context, escaped and shortened, and is answered a/B (approve, block)
// with a gate_response; end of input blocks. work_item_status events print
// one line per change (workstatus.go). Cards the CLI cannot answer
// (checkpoints, reviews, decisions) say to use the web app.
//
// Connection cards (spec 5.10, conncard.go) queue with the approvals: a
// "Connect to ...?" card is answered y/N, a device-code or browser sign-in
// card d/t/c (done, trouble, cancel), a failure card by the number of a
// recovery option or s (skip), a permission card a/o/d (approve, just this
// once, deny); an empty line takes the capital choice. A secure-input card
// never sends the secret over the WebSocket. When standard input is a
// terminal, the secret is typed at the card with echo off and posted to the
// daemon's secure endpoint (POST /secrets/{ref_id}, secret.go), and the
// WebSocket carries only secure_input_completed {ref_id, success}; an empty
// line cancels. From a pipe (or over plain http to another host) the CLI
// reads no secret: the card shows the `silas connections secret <ref_id>`
// command, offers only "cancel", and drops any other line unsent. After
// /connect, an approved "Connect" card, a "done" or a stored secret, the
// next chat line waits for the connection's next card or status, and at
// end of input pending cards get their safe answer (decline, cancel, skip,
// deny).
//
// What the client expects of the server, beyond spec 8.1: answers and
// errors carry reply_to = the client's message_id; the server closes with
// code 4001 when the auth message is missing or wrong.
package cli
