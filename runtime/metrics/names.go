package metrics

// Names of the metrics Silas exports. Use these constants, not literals, so a
// rename is one edit.
const (
	NameTurnsTotal       = "silas_turns_total"
	NameTurnSeconds      = "silas_turn_seconds"
	NameModelCallSeconds = "silas_model_call_seconds"
	NameQueueDepth       = "silas_queue_depth"
	NameErrorsTotal      = "silas_errors_total"
	NameWSConnections    = "silas_ws_connections"
	NameWSFramesIn       = "silas_ws_frames_in_total"
	NameWSFramesOut      = "silas_ws_frames_out_total"
	NamePromptBytes      = "silas_prompt_context_bytes_total"
	NamePromptStable     = "silas_prompt_context_stable_bytes_total"
	NameScopesActive     = "silas_scopes_active"
	NameScopesPassivated = "silas_scopes_passivated_total"
)

// LabelCode is the label of NameErrorsTotal.
const LabelCode = "code"

// Standard is the set of metrics shared across Silas, registered in one place
// so that every package agrees on names, help texts, kinds and buckets.
type Standard struct {
	Turns            *Counter    // silas_turns_total
	TurnSeconds      *Histogram  // silas_turn_seconds
	ModelCallSeconds *Histogram  // silas_model_call_seconds
	QueueDepth       *Gauge      // silas_queue_depth
	Errors           *CounterVec // silas_errors_total{code}
	WSConnections    *Gauge      // silas_ws_connections
	WSFramesIn       *Counter    // silas_ws_frames_in_total
	WSFramesOut      *Counter    // silas_ws_frames_out_total
	PromptBytes      *Counter    // silas_prompt_context_bytes_total
	PromptStable     *Counter    // silas_prompt_context_stable_bytes_total
	ScopesActive     *Gauge      // silas_scopes_active
	ScopesPassivated *Counter    // silas_scopes_passivated_total
}

// NewStandard registers (or finds, since registration is idempotent) the
// standard metrics in r.
func NewStandard(r *Registry) *Standard {
	return &Standard{
		Turns:            r.Counter(NameTurnsTotal, "Turns completed, across all scopes."),
		TurnSeconds:      r.Histogram(NameTurnSeconds, "Wall time of one turn, in seconds.", nil),
		ModelCallSeconds: r.Histogram(NameModelCallSeconds, "Latency of one model call, in seconds.", nil),
		QueueDepth:       r.Gauge(NameQueueDepth, "User messages waiting for a turn, across all scopes."),
		Errors:           r.CounterVec(NameErrorsTotal, "Errors reported to clients, by stable error code.", LabelCode),
		WSConnections:    r.Gauge(NameWSConnections, "Open WebSocket connections."),
		WSFramesIn:       r.Counter(NameWSFramesIn, "WebSocket frames received from clients."),
		WSFramesOut:      r.Counter(NameWSFramesOut, "WebSocket frames sent to clients."),
		PromptBytes:      r.Counter(NamePromptBytes, "Bytes of rendered context sent to the proxy and planner models."),
		PromptStable: r.Counter(NamePromptStable, "Of the rendered context sent, the bytes that repeat the scope's previous render from its start: "+
			"what a provider's prompt cache can reuse when the system prompt is unchanged."),
		ScopesActive: r.Gauge(NameScopesActive, "Scope actors in memory (the owner and customers with a connection or recent activity)."),
		ScopesPassivated: r.Counter(NameScopesPassivated, "Idle scopes stopped after rehydration.scope_idle_timeout_seconds; "+
			"each reloads from the database on its next message."),
	}
}
