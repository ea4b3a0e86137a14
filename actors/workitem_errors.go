package actors

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/silas-ai/silas/runtime/llm"
	"github.com/silas-ai/silas/sandbox"
)

// unrunnable reports an attempt error that no retry, consult or re-plan can
// help with, because the host or the configuration is wrong, and says how
// to fix it. The work item then ends blocked at once instead of climbing
// the escalation ladder (spending attempts, planner calls and the owner's
// attention on a plan that was never the problem).
func unrunnable(err error) (string, bool) {
	var api *llm.APIError
	switch {
	case err == nil:
		return "", false
	case errors.Is(err, sandbox.ErrBackendUnavailable), errors.Is(err, errSkillUnusable):
		return err.Error(), true // their messages say what to enable or re-approve
	case errors.Is(err, llm.ErrMissingAPIKey), errors.Is(err, llm.ErrUnknownRole):
		return fmt.Sprintf("%v; fix the model configuration (silas.models, silas.providers) and restart Silas", err), true
	case errors.As(err, &api) && (api.Status == http.StatusUnauthorized || api.Status == http.StatusForbidden):
		return fmt.Sprintf("the model provider refused the API key (HTTP %d); set a valid key in the environment variable silas.providers.<name>.api_key_env names, and restart Silas", api.Status), true
	case errors.As(err, &api) && api.Status == http.StatusNotFound:
		return "the model provider does not know the configured model (HTTP 404); check silas.models and the provider's model names", true
	}
	return "", false
}

func isUnrunnable(err error) bool {
	_, ok := unrunnable(err)
	return ok
}
