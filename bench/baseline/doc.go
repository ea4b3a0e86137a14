// Package baseline is the load bench's bare daemon: the least a server can
// do to pass the bench's driver, so that Silas can be reported as a ratio
// of it. It is the ceiling of the harness on this machine, not a product.
//
// It speaks the subset of the spec 8.1 WebSocket protocol the driver uses
// (package bench/load):
//
//   - /chat: a customer. The first server event is
//     {"type":"session","role":"customer","session_token":...}.
//   - /ws: the owner. The first client frame must be
//     {"type":"auth","token":...} with [Options.OwnerToken]; the server then
//     sends {"type":"session","role":"owner"}. A wrong or missing token is
//     refused with an error event and the connection closes.
//   - A {"type":"message","text":...,"message_id":...} frame is acked at
//     once ({"type":"ack","message_id":...}), answered by one model call,
//     and the answer sent as {"type":"message","text":...,"sender":"silas",
//     "timestamp":...,"reply_to":...}. Any other frame type gets an error
//     event with code "unknown_type"; a failed model call an error event with
//     code "internal".
//
// The model call is the one Silas makes for a directly answered chatbot turn
// as far as the mock model (bench/mockllm) tells requests apart: a chat
// completion with a system and a user message and the RouteDecision
// structured output, whose response.message is the answer.
//
// What it leaves out is what the ratio measures: it persists nothing (no
// journal, no commit, no audit), runs no gates, no memory, no context
// window, no rate limits and no backpressure; each connection runs its
// turns one at a time on its reader goroutine. It uses the same HTTP and
// WebSocket libraries as Silas's web channel (fasthttp and
// fasthttp/websocket) and a fasthttp client for the model, so the ratio
// counts what Silas does per turn, not a library choice.
package baseline
