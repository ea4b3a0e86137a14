// Package load is the multi-customer load bench of Silas: it starts the real
// daemon and a mock model, drives simulated chatbot customers over /chat
// WebSockets, and reports what the customers saw and what the server spent.
//
// # Processes
//
// Each scenario starts two fresh child processes in a temporary directory:
// bench/cmd/mockllm (the OpenAI-compatible mock model, answering after a
// fixed delay) and `silas serve` with a generated config (see
// [ServerConfig]). The mock runs as its own process rather than inside the
// driver so that the CPU of the three parties (silas, mock, driver) can be
// read apart from /proc and none of them steals the scheduler from another
// unseen; on a 2-core machine they still share the cores, which the report
// shows as the CPU split of every scenario, together with the CPU the rest of
// the machine used meanwhile (work outside the bench makes numbers noisy).
//
// # What a scenario measures
//
// A [Load] scenario connects N customers, waits until every one has its
// session event, then lets each send M messages one after another: send,
// wait for the answer whose reply_to is the message_id, think, repeat. The
// client side records turns completed, failed turns by kind (an error code,
// a timeout, a disconnect, a turn cut by the duration limit), latency
// percentiles, overhead (latency minus the mock's delay) and turns/s; every
// answer is counted per message_id, so a duplicate, missing or unexpected
// answer is reported. The server side is read from /proc/<pid>: CPU seconds
// (utime+stime) spent during the load divided by the turns completed, and
// peak RSS (VmHWM).
//
// # The baseline
//
// A load can also run against the baseline daemon (bench/cmd/baseline,
// package bench/baseline) instead of silas: the same WebSocket protocol
// subset, the same mock model and driver, but no persistence and no gates,
// so it is what the machine, the mock and the driver allow. The standard
// matrix runs every load against both, interleaved (silas, baseline,
// silas, baseline) and repeated, keeps the best run of each ([Best]) and
// reports silas as a ratio of the baseline ([Comparison]): on a shared
// machine single runs swing by up to 2x, and ratios measured side by side
// are what survives the noise.
//
// An [Idle] scenario connects K customers that send nothing and reports the
// RSS growth per connected customer; a [Startup] scenario measures the time
// from starting the process to its ready line, and the idle RSS.
//
// Limits the bench raises, and why, are listed in [RaisedLimits]: every
// simulated customer sends far faster than a person and all of them share
// 127.0.0.1, so the per-scope and per-IP rate limits and the global pending
// turn bound would otherwise turn the bench into a rate-limit test. Nothing
// else is relaxed: turns journal, commit and audit as in production.
package load
