package actors

import (
	"context"
	"errors"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/google/uuid"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/pipeline"
	"github.com/silas-ai/silas/sandbox/executor"
)

// The requests of the proxy's tool loop (runtime/pipeline
// stage_route_tools.go). The loop itself is turn data: the scope only
// performs each call's request, as it does every other request of a turn.
// memory_search is a pipeline.QueryMemory, answered by step like any other;
// context_inspect needs no request.

// errNoWebSearch answers a web search when none is configured; the pipeline
// offers web_search only when it is, so this is a backstop.
var errNoWebSearch = errors.New("web_search is not configured")

// webSearchConfigured reports whether web_search is registered (search
// configured with a key, cmd/silas/search.go).
func webSearchConfigured(reg *executor.Registry) bool {
	if reg == nil {
		return false
	}
	_, ok := reg.Get(executor.WebSearch)
	return ok
}

// onWebSearch runs the proxy's web_search off the mailbox, counted against
// this scope's per-minute search limit. web_search runs in the daemon over
// the provider's HTTP API and never in a sandbox, so it needs no instance.
func (s *Scope) onWebSearch(c actor.Context, turnID string, r *pipeline.WebSearch) {
	var ex executor.Executor
	if s.d.Executors != nil {
		ex, _ = s.d.Executors.Get(executor.WebSearch)
	}
	if ex == nil {
		s.resumeNow(c, turnID, pipeline.Result{Err: errNoWebSearch})
		return
	}
	scope := s.id
	env := &messages.ExecutionEnvelope{
		ExecutionID: uuid.NewString(), TaskDescription: "proxy web search", Action: executor.WebSearch,
		Args: map[string]any{"query": r.Query}, InputArtifacts: map[string]string{}, CredentialRefs: map[string]string{},
		TimeoutSeconds: messages.DefaultTimeoutSeconds, MaxOutputBytes: messages.DefaultMaxOutputBytes,
	}
	s.io(c, turnID, "proxy web search", func(ctx context.Context) pipeline.Result {
		res, err := ex.Execute(executor.WithScope(ctx, scope), env, nil)
		if res != nil {
			// A failed search is a result whose Error the model reads.
			return pipeline.Result{Value: res}
		}
		return pipeline.Result{Err: err}
	})
}

// onTellUser sends the proxy's interim message at once to every attached
// connection (or, when none is attached, to the sender's, as the answer
// would be) and resumes the turn. It is not stored: a client that is not
// connected now does not get it later, and the answer stands without it.
func (s *Scope) onTellUser(c actor.Context, turnID string, r *pipeline.TellUser) {
	delivered := false
	for _, sink := range s.sinks {
		if sink.Send(r.Event) {
			delivered = true
		}
	}
	if len(s.sinks) == 0 && s.current.msg.Sink != nil {
		delivered = s.current.msg.Sink.Send(r.Event)
	}
	s.resumeNow(c, turnID, pipeline.Result{Value: delivered})
}
