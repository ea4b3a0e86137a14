package ownerapi

import (
	"encoding/json"
	"errors"

	"github.com/valyala/fasthttp"

	"github.com/silas-ai/silas/messages"
)

// ErrIncomplete is returned by New when Deps lacks something every request
// needs: the caller wires the missing dependency (see Deps) and tries
// again; it is a programming error, not a runtime condition.
var ErrIncomplete = errors.New("ownerapi: incomplete dependencies")

// codeConflict answers 409: the web channel's code table has no conflict
// code, and the error shape is the same.
const codeConflict messages.Code = "conflict"

// codeValidationFailed answers 422: the skill failed the deterministic
// checks of spec 10.4 and no card went out.
const codeValidationFailed messages.Code = "validation_failed"

// WriteError answers with the web channel's error event, so HTTP and
// WebSocket clients read one error shape with one table of codes. It is
// exported for routes the daemon adds next to these (see API.OwnerOnly).
func WriteError(ctx *fasthttp.RequestCtx, status int, code messages.Code, msg string) {
	b, _ := json.Marshal(&messages.ErrorEvent{Type: "error", Code: code, Message: msg})
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json")
	ctx.SetBody(b)
}
