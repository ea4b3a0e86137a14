package actors

import (
	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/contextmgr"
)

// scrubbedView is what the executor model may see of a tool result: its
// return_value, content and error, scrubbed of prompt-injection markers
// unless the result is owner-tainted (spec 5.12: output of API calls, web
// fetches and third-party tools stays external and is scrubbed before it
// enters any context). Every executor marks its results external today, so
// every result is scrubbed. res is not changed: the ledger keeps what ran.
func scrubbedView(res *messages.ExecutionResult) (view messages.ExecutionModelView, errText *string) {
	view = res.ModelView()
	errText = res.Error
	if res.Taint == messages.TaintOwner {
		return view, errText
	}
	view.ReturnValue = contextmgr.ScrubInjection(view.ReturnValue)
	if view.Content != nil {
		content := make([]map[string]any, len(view.Content))
		for i, block := range view.Content {
			content[i], _ = scrubValue(block).(map[string]any)
		}
		view.Content = content
	}
	if errText != nil {
		s := contextmgr.ScrubInjection(*errText)
		errText = &s
	}
	return view, errText
}

// scrubValue returns a copy of a decoded JSON value with every string in it,
// keys aside, scrubbed.
func scrubValue(v any) any {
	switch x := v.(type) {
	case string:
		return contextmgr.ScrubInjection(x)
	case map[string]any:
		if x == nil {
			return x
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = scrubValue(e)
		}
		return out
	case []any:
		if x == nil {
			return x
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = scrubValue(e)
		}
		return out
	case []string:
		out := make([]string, len(x))
		for i, e := range x {
			out[i] = contextmgr.ScrubInjection(e)
		}
		return out
	}
	return v
}
