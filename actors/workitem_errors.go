package actors

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/silas-ai/silas/runtime/llm"
	"github.com/silas-ai/silas/sandbox"
)

// attemptFailure is what the escalation ladder knows of an attempt error:
// its kind, and whether anything the ladder does can help.
type attemptFailure struct {
	// kind is a model-call kind of runtime/llm (transient, auth, ...), or
	// "host" (nothing may run on this host), "skill" (a skill changed
	// since its approval) or "execution" (anything else).
	kind string
	// final is true when no retry, consult or re-plan can help, because
	// the host or the configuration is wrong; fix then says how to fix it.
	final bool
	fix   string
}

// classifyAttempt classifies an attempt error. A final one ends the work
// item blocked at once instead of climbing the escalation ladder (spending
// attempts, planner calls and the owner's attention on a plan that was
// never the problem).
func classifyAttempt(err error) attemptFailure {
	var api *llm.APIError
	kind := llm.KindOf(err)
	switch {
	case err == nil:
		return attemptFailure{}
	case errors.Is(err, sandbox.ErrBackendUnavailable):
		return attemptFailure{kind: "host", final: true, fix: err.Error()} // its message says what to enable
	case errors.Is(err, errSkillUnusable):
		return attemptFailure{kind: "skill", final: true, fix: err.Error()} // its message says what to re-approve
	case errors.Is(err, llm.ErrMissingAPIKey), errors.Is(err, llm.ErrUnknownRole):
		return attemptFailure{kind: string(kind), final: true,
			fix: fmt.Sprintf("%v; fix the model configuration (silas.models, silas.providers) and restart Silas", err)}
	case errors.As(err, &api) && kind == llm.KindAuth:
		return attemptFailure{kind: string(kind), final: true,
			fix: fmt.Sprintf("the model provider refused the API key (HTTP %d); set a valid key in the environment variable silas.providers.<name>.api_key_env names, and restart Silas", api.Status)}
	case errors.As(err, &api) && api.Status == http.StatusNotFound:
		return attemptFailure{kind: string(kind), final: true,
			fix: "the model provider does not know the configured model (HTTP 404); check silas.models and the provider's model names"}
	case errors.As(err, &api):
		// A refused request (400) or a content filter may pass with
		// another plan: the ladder goes on.
		return attemptFailure{kind: string(kind)}
	}
	return attemptFailure{kind: "execution"}
}
