package ownerapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/silas-ai/silas/messages"
)

// requestTimeout bounds the storage work of one owner HTTP request.
const requestTimeout = 10 * time.Second

func reqContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), requestTimeout)
}

// decodeOwnerBody decodes a JSON object body of at most limit bytes into v,
// refusing unknown fields and trailing data. An empty body leaves v as is
// when emptyOK.
func decodeOwnerBody(ctx *fasthttp.RequestCtx, v any, limit int, emptyOK bool) error {
	body := ctx.PostBody()
	if len(body) > limit {
		return fmt.Errorf("the body is %d bytes; the limit is %d", len(body), limit)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		if emptyOK {
			return nil
		}
		return errors.New("the body is empty; send a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("the body must be a JSON object of the documented fields: %v", err)
	}
	if dec.More() {
		return errors.New("the body must hold one JSON object")
	}
	return nil
}

// decodeBody decodes a JSON request body strictly and validates it.
func decodeBody(ctx *fasthttp.RequestCtx, v interface{ Validate() error }) error {
	dec := json.NewDecoder(strings.NewReader(string(ctx.PostBody())))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return errors.New("the body must be a JSON object of the documented fields: " + err.Error())
	}
	return v.Validate()
}

// WriteJSON answers status with v as JSON; the daemon's other owner
// endpoints (Telegram) answer the same way.
func WriteJSON(ctx *fasthttp.RequestCtx, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		WriteError(ctx, fasthttp.StatusInternalServerError, messages.CodeInternal, "encode the response: "+err.Error())
		return
	}
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json")
	ctx.SetBody(b)
}
