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
// # Chaos: kill -9 under load
//
// A [Chaos] scenario (bench -chaos, make bench-chaos) starts one mock and
// silas, lets N customers chat (each keeps up to two unanswered messages in
// flight), and kills silas with SIGKILL K times, at a random moment or a few
// milliseconds after a customer's send (so that some kills fall before the
// ack, most between the ack and the answer), restarting it each time on the
// same data directory. Customers whose socket breaks wait for the restart,
// reconnect, resume their session with the auth frame carrying their
// session_token, and send every unanswered message again with the same
// message_id. Every ack and every answer frame is recorded per message; at
// the end, after the customers stop sending and the last answers settle:
//
//   - acked lost: a message whose ack arrived and that was never answered
//     (a broken promise; must be 0);
//   - answered twice differently: a second copy of an answer (same
//     reply_to) whose bytes differ from the first, i.e. a turn that ran and
//     was delivered twice (must be 0);
//   - redelivered: a second copy with the same bytes (allowed: delivery is
//     at least once, and clients drop it; the goal is at most one per kill);
//   - per kill: messages in flight and acked-but-unanswered at the kill,
//     kill to ready line, kill to the first new answer, kill to the answer
//     of the last message acknowledged before it.
//
// The run fails (non-zero exit) on a lost message, a conflicting answer or
// an answer to a message the customer never sent; the report lists the lost
// messages' ids and lives (sent, acked, kills after the ack) to look up in
// the daemon's store. -seed replays the kill times and kinds.
//
// # Soak
//
// A [Soak] scenario (bench -soak D, make bench-soak) first probes capacity
// (the same N customers without pause for 15 s on a fresh daemon) unless
// -soak-rate is given, then drives half of it with N customers on another
// fresh daemon for D: a pacer hands out turns at the rate, and a turn due
// while every customer still waits is counted as missed, not queued. Every
// -soak-sample (a minute) it reads silas's VmRSS (split into anonymous
// memory and resident pages of mapped files: Badger maps its tables, so the
// second follows the database's size), threads, the Go heap and the GC's
// heap goal, goroutines
// (go_goroutines from /metrics, the lowest of five reads a moment apart,
// with a random metrics token passed as SILAS_CHANNELS__WEB__METRICS_TOKEN
// so that it appears in no report), open files (/proc/<pid>/fd), the Badger
// directory's size (blocks held and file sizes), and the minute's turns/s,
// CPU per turn and latency. The verdict leaves out the warm-up (the first
// 10% of D, at most 5 minutes) and calls RSS and goroutines flat when
// (max - min) / min over the remaining samples is at most 10%; it also
// compares the turns/s of the last samples with the first. A soak that is
// not flat exits non-zero.
//
// Limits the bench raises, and why, are listed in [RaisedLimits]: every
// simulated customer sends far faster than a person and all of them share
// 127.0.0.1, so the per-scope and per-IP rate limits and the global pending
// turn bound would otherwise turn the bench into a rate-limit test. Nothing
// else is relaxed: turns journal, commit and audit as in production.
package load
