package ownerapi

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/persistence"
	"github.com/silas-ai/silas/runtime/devices"
)

// Enrolment code lifetimes.
const (
	// DefaultCodeTTL is how long an enrolment code stays valid when the
	// request names no ttl_seconds.
	DefaultCodeTTL = 10 * time.Minute
	minCodeTTL     = time.Minute
	maxCodeTTL     = 24 * time.Hour
	maxDeviceBody  = 4 << 10
)

// Device is an owner device as the API shows it.
type Device struct {
	ID        string     `json:"id"`
	Name      string     `json:"name"`
	PublicKey string     `json:"public_key"`
	AddedAt   time.Time  `json:"added_at"`
	Revoked   bool       `json:"revoked"`
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
}

func viewDevice(d persistence.Device) Device {
	name := d.Name
	if name == "" {
		name = "device"
	}
	return Device{ID: d.ID, Name: name, PublicKey: base64.StdEncoding.EncodeToString(d.PublicKey),
		AddedAt: d.AddedAt, Revoked: d.Revoked(), RevokedAt: d.RevokedAt}
}

// Request and response bodies of the device endpoints (docs/owner-api.md
// and README "Devices"); `silas devices` decodes the same types.
type (
	// CodeRequest is the body of POST /devices/codes.
	CodeRequest struct {
		Name       string `json:"name"`
		TTLSeconds int    `json:"ttl_seconds"`
	}
	// CodeResponse carries the one-time enrolment code, shown only here.
	CodeResponse struct {
		Code      string    `json:"code"`
		Name      string    `json:"name"`
		ExpiresAt time.Time `json:"expires_at"`
	}
	// EnrolRequest is the body of POST /devices/enroll.
	EnrolRequest struct {
		Code      string `json:"code"`
		Name      string `json:"name"`
		PublicKey string `json:"public_key"`
	}
	// DeviceResponse answers an enrolment or a revocation.
	DeviceResponse struct {
		Device Device `json:"device"`
	}
	// DevicesResponse answers GET /devices, revoked devices included.
	DevicesResponse struct {
		Devices []Device `json:"devices"`
	}
)

func (a *API) deviceRoutes() map[string]fasthttp.RequestHandler {
	return map[string]fasthttp.RequestHandler{
		"POST /devices/codes":  a.createCode,
		"POST /devices/enroll": a.enrolDevice,
		"GET /devices":         a.listDevices,
		"POST /devices/":       a.revokeDevice,
	}
}

func (a *API) createCode(ctx *fasthttp.RequestCtx) {
	if string(ctx.Path()) != "/devices/codes" {
		WriteError(ctx, fasthttp.StatusNotFound, messages.CodeNotFound, "no such endpoint")
		return
	}
	var req CodeRequest
	if err := decodeOwnerBody(ctx, &req, maxDeviceBody, true); err != nil {
		WriteError(ctx, fasthttp.StatusBadRequest, messages.CodeBadRequest, err.Error())
		return
	}
	ttl := DefaultCodeTTL
	if req.TTLSeconds != 0 {
		ttl = time.Duration(req.TTLSeconds) * time.Second
	}
	if ttl < minCodeTTL || ttl > maxCodeTTL {
		WriteError(ctx, fasthttp.StatusBadRequest, messages.CodeBadRequest,
			fmt.Sprintf("ttl_seconds must be between %d and %d", int(minCodeTTL.Seconds()), int(maxCodeTTL.Seconds())))
		return
	}
	if req.Name != "" {
		if err := devices.CheckName(req.Name); err != nil {
			WriteError(ctx, fasthttp.StatusBadRequest, messages.CodeBadRequest, err.Error())
			return
		}
	}
	code, err := devices.NewCode(rand.Reader)
	if err != nil {
		WriteError(ctx, fasthttp.StatusInternalServerError, messages.CodeInternal, err.Error())
		return
	}
	hash, err := devices.HashCode(code)
	if err != nil { // a generated code always hashes
		WriteError(ctx, fasthttp.StatusInternalServerError, messages.CodeInternal, err.Error())
		return
	}
	expires := time.Now().Add(ttl).UTC().Truncate(time.Second)
	c, cancel := reqContext()
	defer cancel()
	if err := a.d.DB.Devices().AddCode(c, hash, persistence.EnrolmentCode{Name: req.Name, ExpiresAt: expires}); err != nil {
		WriteError(ctx, fasthttp.StatusInternalServerError, messages.CodeInternal, err.Error())
		return
	}
	// The code itself is shown once, to the owner; the audit log only says
	// that one was made.
	if err := a.audit(c, "device_code_created", map[string]any{"name": req.Name, "expires_at": expires}); err != nil {
		WriteError(ctx, fasthttp.StatusInternalServerError, messages.CodeInternal, err.Error())
		return
	}
	WriteJSON(ctx, fasthttp.StatusOK, CodeResponse{Code: code, Name: req.Name, ExpiresAt: expires})
}

func (a *API) enrolDevice(ctx *fasthttp.RequestCtx) {
	if string(ctx.Path()) != "/devices/enroll" {
		WriteError(ctx, fasthttp.StatusNotFound, messages.CodeNotFound, "no such endpoint")
		return
	}
	var req EnrolRequest
	if err := decodeOwnerBody(ctx, &req, maxDeviceBody, false); err != nil {
		WriteError(ctx, fasthttp.StatusBadRequest, messages.CodeBadRequest, err.Error())
		return
	}
	c, cancel := reqContext()
	defer cancel()
	d, err := a.d.Devices.enrol(c, req.Code, req.Name, req.PublicKey)
	switch {
	case errors.Is(err, devices.ErrInvalidPublicKey), errors.Is(err, devices.ErrInvalidName):
		WriteError(ctx, fasthttp.StatusBadRequest, messages.CodeBadRequest, err.Error())
		return
	case errors.Is(err, persistence.ErrCodeInvalid):
		WriteError(ctx, fasthttp.StatusForbidden, messages.CodeForbidden,
			"the enrolment code is unknown, used or expired: run `silas devices add` for a new one")
		return
	case errors.Is(err, persistence.ErrDeviceExists):
		WriteError(ctx, fasthttp.StatusConflict, codeConflict,
			"this key is already enrolled or was revoked: generate a new key pair on the device and enrol that")
		return
	case err != nil:
		WriteError(ctx, fasthttp.StatusInternalServerError, messages.CodeInternal, err.Error())
		return
	}
	if err := a.audit(c, "device_enrolled", map[string]any{"device_id": d.ID, "name": d.Name}); err != nil {
		WriteError(ctx, fasthttp.StatusInternalServerError, messages.CodeInternal, err.Error())
		return
	}
	WriteJSON(ctx, fasthttp.StatusCreated, DeviceResponse{Device: viewDevice(d)})
}

func (a *API) listDevices(ctx *fasthttp.RequestCtx) {
	if string(ctx.Path()) != "/devices" {
		WriteError(ctx, fasthttp.StatusNotFound, messages.CodeNotFound, "no such endpoint")
		return
	}
	c, cancel := reqContext()
	defer cancel()
	list, err := a.d.DB.Devices().List(c)
	if err != nil {
		WriteError(ctx, fasthttp.StatusInternalServerError, messages.CodeInternal, err.Error())
		return
	}
	out := DevicesResponse{Devices: make([]Device, 0, len(list))}
	for _, d := range list {
		out.Devices = append(out.Devices, viewDevice(d))
	}
	WriteJSON(ctx, fasthttp.StatusOK, out)
}

// revokeDevice serves POST /devices/{id}/revoke.
func (a *API) revokeDevice(ctx *fasthttp.RequestCtx) {
	id, ok := strings.CutSuffix(strings.TrimPrefix(string(ctx.Path()), "/devices/"), "/revoke")
	if !ok || id == "" || strings.Contains(id, "/") {
		WriteError(ctx, fasthttp.StatusNotFound, messages.CodeNotFound, "no such endpoint; revoke with POST /devices/{id}/revoke")
		return
	}
	c, cancel := reqContext()
	defer cancel()
	d, err := a.d.Devices.revoke(c, id)
	switch {
	case errors.Is(err, persistence.ErrNotFound):
		WriteError(ctx, fasthttp.StatusNotFound, messages.CodeNotFound, fmt.Sprintf("no device %q: list them with `silas devices list`", id))
		return
	case err != nil:
		WriteError(ctx, fasthttp.StatusInternalServerError, messages.CodeInternal, err.Error())
		return
	}
	if err := a.audit(c, "device_revoked", map[string]any{"device_id": d.ID, "name": d.Name}); err != nil {
		WriteError(ctx, fasthttp.StatusInternalServerError, messages.CodeInternal, err.Error())
		return
	}
	WriteJSON(ctx, fasthttp.StatusOK, DeviceResponse{Device: viewDevice(d)})
}
