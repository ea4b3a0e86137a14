package config

import (
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// Channels configures the channels.
type Channels struct {
	// Web is the HTTP + WebSocket channel and the PWA.
	Web Web `koanf:"web"`
	// Telegram is the Telegram bot channel.
	Telegram Telegram `koanf:"telegram"`
	// CLI is the local command-line channel.
	CLI CLI `koanf:"cli"`
}

// Web configures the HTTP + WebSocket channel.
type Web struct {
	// Enabled serves the web channel. Default true.
	Enabled bool `koanf:"enabled"`
	// Host is the bind address. Any host other than 127.0.0.0/8, ::1 or localhost
	// requires AuthToken. Default "127.0.0.1".
	Host string `koanf:"host"`
	// Port is the TCP port, 1..65535; 0 picks a free port (for tests). Default 8420.
	Port int `koanf:"port"`
	// AuthToken is the shared secret clients present in their first message or in
	// Sec-WebSocket-Protocol; empty (null) means none, allowed only on loopback.
	// Default null. Prefer SILAS_CHANNELS__WEB__AUTH_TOKEN over the file.
	AuthToken string `koanf:"auth_token" secret:"true"`
	// MaxFrameBytes caps one inbound WebSocket frame. Default 65536.
	MaxFrameBytes int `koanf:"max_frame_bytes"`
	// AuthTimeoutSeconds is how long a new connection may take to authenticate before
	// it is closed with 4001. Default 5.
	AuthTimeoutSeconds int `koanf:"auth_timeout_seconds"`
	// AllowedOrigins are Origin values ("https://app.example.com") accepted for
	// WebSocket upgrades besides the server's own host. Default [].
	AllowedOrigins []string `koanf:"allowed_origins"`
	// SendQueue is how many outbound frames are buffered per connection before the
	// connection is treated as too slow. Default 256.
	SendQueue int `koanf:"send_queue"`
	// MaxTextBytes caps the text (and edited_text, freetext) of one frame, in bytes of
	// UTF-8; a longer one is answered bad_request naming the field. A frame over
	// max_frame_bytes is refused before this check. Default 32768.
	MaxTextBytes int `koanf:"max_text_bytes"`
	// MaxSockets caps open customer sockets (/chat); beyond it an upgrade gets HTTP 503
	// with code too_many_connections. The owner's sockets are counted apart
	// (max_owner_sockets), so customers cannot crowd the owner out. Default 10000.
	MaxSockets int `koanf:"max_sockets"`
	// MaxSocketsPerIP caps open customer sockets from one client IP (see
	// trusted_proxies); beyond it HTTP 429. Default 100.
	MaxSocketsPerIP int `koanf:"max_sockets_per_ip"`
	// MaxUnauthenticatedSockets caps /ws sockets still waiting for their auth frame
	// (each for at most auth_timeout_seconds); beyond it HTTP 503. Default 64.
	MaxUnauthenticatedSockets int `koanf:"max_unauthenticated_sockets"`
	// MaxUnauthenticatedSocketsPerIP is the same cap per client IP; beyond it HTTP 429.
	// Default 8.
	MaxUnauthenticatedSocketsPerIP int `koanf:"max_unauthenticated_sockets_per_ip"`
	// MaxOwnerSockets caps sockets authenticated with the owner token (one per open
	// app or `silas chat`); beyond it HTTP 503, or close code 1013 after a late auth
	// frame. Default 32.
	MaxOwnerSockets int `koanf:"max_owner_sockets"`
	// IdleTimeoutSeconds is how long a customer socket may stay open without sending a
	// message; then it gets an idle_timeout error and close code 4008. Default 120.
	IdleTimeoutSeconds int `koanf:"idle_timeout_seconds"`
	// HeaderTimeoutSeconds is how long a client may take to send a request's headers;
	// a slower client is disconnected. Default 10.
	HeaderTimeoutSeconds int `koanf:"header_timeout_seconds"`
	// BodyTimeoutSeconds is how long a client may take to send a request's body once
	// its headers arrived; a slower client is disconnected. Default 30.
	BodyTimeoutSeconds int `koanf:"body_timeout_seconds"`
	// TrustedProxies are the IPs and CIDRs ("10.0.0.0/8") of reverse proxies in front
	// of Silas. Only for a connection from one of them is the client IP of the per-IP
	// limits read from X-Forwarded-For (the rightmost address that is not a trusted
	// proxy). Default [].
	TrustedProxies []string `koanf:"trusted_proxies"`
	// AllowedHosts are Host header values served besides localhost, 127.0.0.1, [::1]
	// and the bind address: "chat.example.com" (any port) or "chat.example.com:8443".
	// A request for any other host gets 421 on every route (DNS rebinding). Default [].
	AllowedHosts []string `koanf:"allowed_hosts"`
	// MetricsToken is a bearer token that may read /metrics and /debug/pprof/ besides
	// the owner token, for a scraper that should not hold the owner's. Empty (null)
	// means only the owner token. Default null. Prefer
	// SILAS_CHANNELS__WEB__METRICS_TOKEN over the file.
	MetricsToken string `koanf:"metrics_token" secret:"true"`
}

// IsLoopbackHost reports whether Host is localhost, ::1 or in 127.0.0.0/8.
func (w Web) IsLoopbackHost() bool { return isLoopbackHost(w.Host) }

// Addr is the listen address "host:port".
func (w Web) Addr() string { return net.JoinHostPort(w.Host, strconv.Itoa(w.Port)) }

// AuthTimeout is AuthTimeoutSeconds as a duration.
func (w Web) AuthTimeout() time.Duration {
	return time.Duration(w.AuthTimeoutSeconds) * time.Second
}

// IdleTimeout is IdleTimeoutSeconds as a duration.
func (w Web) IdleTimeout() time.Duration {
	return time.Duration(w.IdleTimeoutSeconds) * time.Second
}

// HeaderTimeout is HeaderTimeoutSeconds as a duration.
func (w Web) HeaderTimeout() time.Duration {
	return time.Duration(w.HeaderTimeoutSeconds) * time.Second
}

// BodyTimeout is BodyTimeoutSeconds as a duration.
func (w Web) BodyTimeout() time.Duration {
	return time.Duration(w.BodyTimeoutSeconds) * time.Second
}

// String prints the settings with the auth and metrics tokens redacted.
func (w Web) String() string { return redactedString(w) }

func isLoopbackHost(host string) bool {
	h := strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(h, "localhost") {
		return true
	}
	addr, err := netip.ParseAddr(h)
	if err != nil {
		return false
	}
	return addr.Unmap().IsLoopback()
}

// Telegram configures the Telegram bot channel (docs/telegram.md).
type Telegram struct {
	// Enabled runs the Telegram channel: the daemon checks Token with the Bot
	// API at start and refuses to start when it is missing or refused.
	// Default false.
	Enabled bool `koanf:"enabled"`
	// Token is the bot token from @BotFather. It goes only to APIURL, never
	// to logs, audit or clients. Default "${SILAS_TELEGRAM_TOKEN}".
	Token string `koanf:"token" secret:"true"`
	// OwnerChatID is the owner's chat id. Empty means the owner pairs a chat
	// with `silas telegram pair` and `/start <code>`; set, it names the
	// owner's chat and pairing is off. Default "${SILAS_TELEGRAM_OWNER_ID}".
	OwnerChatID string `koanf:"owner_chat_id"`
	// APIURL is the Bot API server: https, or http to a loopback address (a
	// local Bot API server). Default "https://api.telegram.org".
	APIURL string `koanf:"api_url"`
	// WebhookURL switches from long polling to a webhook: the public https
	// URL (port 443, 80, 88 or 8443) at which Telegram reaches this daemon's
	// web channel, with a path under /telegram/ (for example
	// https://silas.example.com/telegram/webhook). Its host is served
	// besides channels.web.allowed_hosts. Empty means long polling.
	// Default "".
	WebhookURL string `koanf:"webhook_url"`
	// WebAppURL is the web app's address as the owner's phone reaches it, for
	// the links on cards that must be answered in the app (high-risk and
	// irreversible cards, secure input). Empty means
	// http://<channels.web.host>:<channels.web.port>. Default "".
	WebAppURL string `koanf:"web_app_url"`
}

// OwnerChat returns the configured owner chat id; ok is false when none is
// configured (the owner pairs a chat instead).
func (t Telegram) OwnerChat() (id int64, ok bool) {
	id, err := strconv.ParseInt(strings.TrimSpace(t.OwnerChatID), 10, 64)
	return id, err == nil && id != 0
}

// WebApp returns the web app's base URL for card links: WebAppURL without a
// trailing slash, or the web channel's own address (an unspecified bind
// address is written as localhost).
func (t Telegram) WebApp(w Web) string {
	if t.WebAppURL != "" {
		return strings.TrimRight(t.WebAppURL, "/")
	}
	host := w.Host
	if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil && a.IsUnspecified() {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(strings.Trim(host, "[]"), strconv.Itoa(w.Port))
}

// String prints the settings with the token redacted.
func (t Telegram) String() string { return redactedString(t) }

// CLI configures the local command-line channel.
type CLI struct {
	// Enabled runs the CLI channel. Default false.
	Enabled bool `koanf:"enabled"`
}

// Chatbot configures multi-customer chatbot deployments.
type Chatbot struct {
	// Enabled serves customers, each in their own scope. Default false.
	Enabled bool `koanf:"enabled"`
	// SessionTTLHours is how long an idle customer session is kept. Default 720.
	SessionTTLHours int `koanf:"session_ttl_hours"`
	// SystemPrompt is prepended to customer conversations. Default "".
	SystemPrompt string `koanf:"system_prompt"`
}

// SessionTTL is SessionTTLHours as a duration.
func (c Chatbot) SessionTTL() time.Duration {
	return time.Duration(c.SessionTTLHours) * time.Hour
}

// Limits are rate limits; each is a positive count.
type Limits struct {
	// WSMessagesPerMinutePerScope limits inbound WebSocket messages. Default 60.
	WSMessagesPerMinutePerScope int `koanf:"ws_messages_per_minute_per_scope"`
	// WSMessagesPerMinutePerIP limits inbound WebSocket messages per client IP.
	// Default 240.
	WSMessagesPerMinutePerIP int `koanf:"ws_messages_per_minute_per_ip"`
	// LLMCallsPerMinutePerScope limits model calls. Default 30.
	LLMCallsPerMinutePerScope int `koanf:"llm_calls_per_minute_per_scope"`
	// WebSearchCallsPerMinutePerScope limits web searches. Default 20.
	WebSearchCallsPerMinutePerScope int `koanf:"web_search_calls_per_minute_per_scope"`
	// MemoryOpsPerMinutePerScope limits memory operations. Default 120.
	MemoryOpsPerMinutePerScope int `koanf:"memory_ops_per_minute_per_scope"`
	// MaxMemoryOpsPerTurn caps memory operations in one turn. Default 10.
	MaxMemoryOpsPerTurn int `koanf:"max_memory_ops_per_turn"`
	// MaxGateEvalsPerTurn caps gate evaluations in one turn. Default 32.
	MaxGateEvalsPerTurn int `koanf:"max_gate_evals_per_turn"`
	// SuggestionsPerHourPerScope caps suggestions. Default 6.
	SuggestionsPerHourPerScope int `koanf:"suggestions_per_hour_per_scope"`
	// AutonomyProposalsPerWeekPerScope caps autonomy proposals. Default 3.
	AutonomyProposalsPerWeekPerScope int `koanf:"autonomy_proposals_per_week_per_scope"`
	// MaxParallelExecutorsPerScope is how many tasks of a scope's projects
	// run at the same time, each with its own executor and sandbox (spec
	// 19.7). Default 8.
	MaxParallelExecutorsPerScope int `koanf:"max_parallel_executors_per_scope"`
	// MaxParallelExecutors is the same bound across all scopes. Default 16.
	MaxParallelExecutors int `koanf:"max_parallel_executors"`
}

// Backpressure bounds queued turns.
type Backpressure struct {
	// MaxPendingTurnsPerScope is how many user messages a scope queues while a turn
	// runs; beyond it the sender gets a "busy" error. Default 20.
	MaxPendingTurnsPerScope int `koanf:"max_pending_turns_per_scope"`
	// MaxPendingTurnsTotal is the same bound across all scopes. Default 500.
	MaxPendingTurnsTotal int `koanf:"max_pending_turns_total"`
	// OwnerReservedTurns is the part of MaxPendingTurnsTotal kept for the
	// owner's scope: chatbot customers together never hold more than
	// MaxPendingTurnsTotal minus it, so a crowd of customers cannot make
	// the owner's messages busy. At least 1 and less than
	// MaxPendingTurnsTotal. Default 20.
	OwnerReservedTurns int `koanf:"owner_reserved_turns"`
	// MaxPendingTurnsPerIP bounds the customer messages waiting or running
	// that came from one client IP, across all of its sessions, so that one
	// address cannot fill the customers' share alone. Default 100.
	MaxPendingTurnsPerIP int `koanf:"max_pending_turns_per_ip"`
	// ShutdownGraceSeconds is how long shutdown waits for running turns. Default 30.
	ShutdownGraceSeconds int `koanf:"shutdown_grace_seconds"`
}

// ShutdownGrace is ShutdownGraceSeconds as a duration.
func (b Backpressure) ShutdownGrace() time.Duration {
	return time.Duration(b.ShutdownGraceSeconds) * time.Second
}
