package ownerapi

import (
	"errors"
	"net/url"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/notify"
	"github.com/silas-ai/silas/persistence"
)

// maxPushBody bounds a subscription body: an endpoint of at most
// notify.MaxEndpointLen and two short keys.
const maxPushBody = 4 << 10

// Request and response bodies of the Web Push endpoints
// (docs/owner-api.md).
type (
	// PushKeyResponse answers GET /push/key: the VAPID public key the app
	// subscribes with (applicationServerKey), base64url.
	PushKeyResponse struct {
		PublicKey string `json:"public_key"`
	}
	// PushSubscribeRequest is the body of POST /push/subscribe: the
	// browser's PushSubscription.toJSON() as it is.
	PushSubscribeRequest struct {
		Endpoint       string   `json:"endpoint"`
		ExpirationTime *float64 `json:"expirationTime"`
		Keys           struct {
			P256dh string `json:"p256dh"`
			Auth   string `json:"auth"`
		} `json:"keys"`
	}
	// PushUnsubscribeRequest is the body of POST /push/unsubscribe.
	PushUnsubscribeRequest struct {
		Endpoint string `json:"endpoint"`
	}
	// PushSubscriptionResponse answers both: whether the subscription is
	// stored now, and whether this request added or removed one.
	PushSubscriptionResponse struct {
		Subscribed bool `json:"subscribed"`
		Changed    bool `json:"changed"`
	}
)

// pushRoutes let the app subscribe the browser it runs in to Web Push
// notifications of pending cards (package notify sends them).
func (a *API) pushRoutes() map[string]fasthttp.RequestHandler {
	return map[string]fasthttp.RequestHandler{
		"GET /push/key":          a.pushKey,
		"POST /push/subscribe":   a.pushSubscribe,
		"POST /push/unsubscribe": a.pushUnsubscribe,
	}
}

// pushReady answers 503 and reports false when this process sends no
// notifications.
func (a *API) pushReady(ctx *fasthttp.RequestCtx, path string) bool {
	if string(ctx.Path()) != path {
		WriteError(ctx, fasthttp.StatusNotFound, messages.CodeNotFound, "no such endpoint")
		return false
	}
	if a.d.PushKey == "" {
		WriteError(ctx, fasthttp.StatusServiceUnavailable, messages.CodeUnavailable, "notifications are not available in this process; run Silas with `silas serve`")
		return false
	}
	return true
}

func (a *API) pushKey(ctx *fasthttp.RequestCtx) {
	if !a.pushReady(ctx, "/push/key") {
		return
	}
	WriteJSON(ctx, fasthttp.StatusOK, PushKeyResponse{PublicKey: a.d.PushKey})
}

func (a *API) pushSubscribe(ctx *fasthttp.RequestCtx) {
	if !a.pushReady(ctx, "/push/subscribe") {
		return
	}
	var req PushSubscribeRequest
	if err := decodeOwnerBody(ctx, &req, maxPushBody, false); err != nil {
		WriteError(ctx, fasthttp.StatusBadRequest, messages.CodeBadRequest, err.Error())
		return
	}
	if err := notify.CheckSubscription(req.Endpoint, req.Keys.P256dh, req.Keys.Auth); err != nil {
		WriteError(ctx, fasthttp.StatusBadRequest, messages.CodeBadRequest, err.Error()+"; subscribe again from the app")
		return
	}
	c, cancel := reqContext()
	defer cancel()
	added, err := a.d.DB.PushSubscriptions().Put(c, persistence.PushSubscription{
		Endpoint: req.Endpoint, P256dh: req.Keys.P256dh, Auth: req.Keys.Auth, AddedAt: time.Now().UTC(),
	})
	switch {
	case errors.Is(err, persistence.ErrTooManyPushSubscriptions):
		WriteError(ctx, fasthttp.StatusConflict, messages.CodeBadRequest, "too many browsers are subscribed to notifications; turn them off in one you no longer use, then try again")
		return
	case err != nil:
		WriteError(ctx, fasthttp.StatusInternalServerError, messages.CodeInternal, err.Error())
		return
	}
	if err := a.audit(c, "push_subscribed", map[string]any{"push_service": pushHost(req.Endpoint), "added": added}); err != nil {
		WriteError(ctx, fasthttp.StatusInternalServerError, messages.CodeInternal, err.Error())
		return
	}
	status := fasthttp.StatusOK
	if added {
		status = fasthttp.StatusCreated
	}
	WriteJSON(ctx, status, PushSubscriptionResponse{Subscribed: true, Changed: added})
}

func (a *API) pushUnsubscribe(ctx *fasthttp.RequestCtx) {
	if !a.pushReady(ctx, "/push/unsubscribe") {
		return
	}
	var req PushUnsubscribeRequest
	if err := decodeOwnerBody(ctx, &req, maxPushBody, false); err != nil {
		WriteError(ctx, fasthttp.StatusBadRequest, messages.CodeBadRequest, err.Error())
		return
	}
	if req.Endpoint == "" || len(req.Endpoint) > notify.MaxEndpointLen {
		WriteError(ctx, fasthttp.StatusBadRequest, messages.CodeBadRequest, "endpoint must be the subscription's endpoint URL")
		return
	}
	c, cancel := reqContext()
	defer cancel()
	removed, err := a.d.DB.PushSubscriptions().Delete(c, req.Endpoint)
	if err != nil {
		WriteError(ctx, fasthttp.StatusInternalServerError, messages.CodeInternal, err.Error())
		return
	}
	if removed {
		if err := a.audit(c, "push_unsubscribed", map[string]any{"push_service": pushHost(req.Endpoint)}); err != nil {
			WriteError(ctx, fasthttp.StatusInternalServerError, messages.CodeInternal, err.Error())
			return
		}
	}
	WriteJSON(ctx, fasthttp.StatusOK, PushSubscriptionResponse{Subscribed: false, Changed: removed})
}

// pushHost names the push service an audit entry mentions; the endpoint's
// path identifies the browser and stays out of the log.
func pushHost(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil {
		return ""
	}
	return u.Host
}
