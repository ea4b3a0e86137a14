package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
	"github.com/valyala/fasthttp"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/persistence"
	"github.com/silas-ai/silas/runtime/devices"
)

// Enrolment code lifetimes.
const (
	defaultCodeTTL = 10 * time.Minute
	minCodeTTL     = time.Minute
	maxCodeTTL     = 24 * time.Hour
	maxDeviceBody  = 4 << 10
)

// deviceRegistry is the daemon's view of the active owner device keys. It
// is the only writer of devices (the CLI goes through the daemon's HTTP
// API, since Badger admits one process), so it keeps the verifying Set in
// memory and swaps it after every change it makes: a revocation applies to
// the next message, with no restart and no database read per message.
type deviceRegistry struct {
	db  *persistence.DB
	log zerolog.Logger

	mu  sync.Mutex // serialises changes and reloads
	set atomic.Pointer[devices.Set]
}

func newDeviceRegistry(ctx context.Context, db *persistence.DB, log zerolog.Logger) (*deviceRegistry, error) {
	r := &deviceRegistry{db: db, log: log}
	r.set.Store(devices.NewSet(nil))
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.reloadLocked(ctx); err != nil {
		return nil, fmt.Errorf("load owner devices: %w", err)
	}
	return r, nil
}

func (r *deviceRegistry) reloadLocked(ctx context.Context) error {
	list, err := r.db.Devices().List(ctx)
	if err != nil {
		return err
	}
	keys := make([]devices.Key, 0, len(list))
	for _, d := range list {
		if !d.Revoked() {
			keys = append(keys, devices.Key{ID: d.ID, PublicKey: d.PublicKey})
		}
	}
	r.set.Store(devices.NewSet(keys))
	return nil
}

// Verify checks a message signature against the active device keys.
func (r *deviceRegistry) Verify(msg, sig []byte) (string, bool) { return r.set.Load().Verify(msg, sig) }

// enrol redeems a code for pub and makes the key active.
func (r *deviceRegistry) enrol(ctx context.Context, code, name string, pubB64 string) (persistence.Device, error) {
	pub, err := devices.ParsePublicKey(pubB64)
	if err != nil {
		return persistence.Device{}, err
	}
	if name != "" {
		if err := devices.CheckName(name); err != nil {
			return persistence.Device{}, err
		}
	}
	hash, err := devices.HashCode(code)
	if err != nil {
		return persistence.Device{}, fmt.Errorf("%w: %w", persistence.ErrCodeInvalid, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	d, err := r.db.Devices().Redeem(ctx, hash, persistence.Device{ID: devices.ID(pub), Name: name, PublicKey: pub}, time.Now())
	if err != nil {
		return persistence.Device{}, err
	}
	if err := r.reloadLocked(ctx); err != nil {
		// The enrolment itself succeeded: the key becomes active with the
		// next successful reload (any later change, or a restart).
		r.log.Error().Err(err).Str("device_id", d.ID).Msg("reload owner devices after enrolment")
	}
	return d, nil
}

// revoke revokes device id. The in-memory set drops the key even when the
// reload that follows fails, so a revocation is never silently delayed.
func (r *deviceRegistry) revoke(ctx context.Context, id string) (persistence.Device, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	d, err := r.db.Devices().Revoke(ctx, id, time.Now())
	if err != nil {
		return persistence.Device{}, err
	}
	r.set.Store(r.set.Load().Without(id))
	if err := r.reloadLocked(ctx); err != nil {
		r.log.Error().Err(err).Str("device_id", id).Msg("reload owner devices after revocation")
	}
	return d, nil
}

// deviceView is a device as the API shows it.
type deviceView struct {
	ID        string     `json:"id"`
	Name      string     `json:"name"`
	PublicKey string     `json:"public_key"`
	AddedAt   time.Time  `json:"added_at"`
	Revoked   bool       `json:"revoked"`
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
}

func viewDevice(d persistence.Device) deviceView {
	name := d.Name
	if name == "" {
		name = "device"
	}
	return deviceView{ID: d.ID, Name: name, PublicKey: base64.StdEncoding.EncodeToString(d.PublicKey),
		AddedAt: d.AddedAt, Revoked: d.Revoked(), RevokedAt: d.RevokedAt}
}

// Request and response bodies of the device endpoints (see /work/pwa_api.md
// and README "Devices").
type (
	codeRequest struct {
		Name       string `json:"name"`
		TTLSeconds int    `json:"ttl_seconds"`
	}
	codeResponse struct {
		Code      string    `json:"code"`
		Name      string    `json:"name"`
		ExpiresAt time.Time `json:"expires_at"`
	}
	enrolRequest struct {
		Code      string `json:"code"`
		Name      string `json:"name"`
		PublicKey string `json:"public_key"`
	}
	deviceResponse struct {
		Device deviceView `json:"device"`
	}
	devicesResponse struct {
		Devices []deviceView `json:"devices"`
	}
)

func (p *pwaAPI) deviceRoutes() map[string]fasthttp.RequestHandler {
	return map[string]fasthttp.RequestHandler{
		"POST /devices/codes":  p.newCode,
		"POST /devices/enroll": p.enrolDevice,
		"GET /devices":         p.listDevices,
		"POST /devices/":       p.revokeDevice,
	}
}

func (p *pwaAPI) newCode(ctx *fasthttp.RequestCtx) {
	if string(ctx.Path()) != "/devices/codes" {
		writeJSONError(ctx, fasthttp.StatusNotFound, messages.CodeNotFound, "no such endpoint")
		return
	}
	var req codeRequest
	if err := decodeOwnerBody(ctx, &req, maxDeviceBody, true); err != nil {
		writeJSONError(ctx, fasthttp.StatusBadRequest, messages.CodeBadRequest, err.Error())
		return
	}
	ttl := defaultCodeTTL
	if req.TTLSeconds != 0 {
		ttl = time.Duration(req.TTLSeconds) * time.Second
	}
	if ttl < minCodeTTL || ttl > maxCodeTTL {
		writeJSONError(ctx, fasthttp.StatusBadRequest, messages.CodeBadRequest,
			fmt.Sprintf("ttl_seconds must be between %d and %d", int(minCodeTTL.Seconds()), int(maxCodeTTL.Seconds())))
		return
	}
	if req.Name != "" {
		if err := devices.CheckName(req.Name); err != nil {
			writeJSONError(ctx, fasthttp.StatusBadRequest, messages.CodeBadRequest, err.Error())
			return
		}
	}
	code, err := devices.NewCode(rand.Reader)
	if err != nil {
		writeJSONError(ctx, fasthttp.StatusInternalServerError, messages.CodeInternal, err.Error())
		return
	}
	hash, err := devices.HashCode(code)
	if err != nil { // a generated code always hashes
		writeJSONError(ctx, fasthttp.StatusInternalServerError, messages.CodeInternal, err.Error())
		return
	}
	expires := time.Now().Add(ttl).UTC().Truncate(time.Second)
	c, cancel := reqContext()
	defer cancel()
	if err := p.db.Devices().AddCode(c, hash, persistence.EnrolmentCode{Name: req.Name, ExpiresAt: expires}); err != nil {
		writeJSONError(ctx, fasthttp.StatusInternalServerError, messages.CodeInternal, err.Error())
		return
	}
	// The code itself is shown once, to the owner; the audit log only says
	// that one was made.
	if err := p.audit(c, "device_code_created", map[string]any{"name": req.Name, "expires_at": expires}); err != nil {
		writeJSONError(ctx, fasthttp.StatusInternalServerError, messages.CodeInternal, err.Error())
		return
	}
	writeJSON(ctx, fasthttp.StatusOK, codeResponse{Code: code, Name: req.Name, ExpiresAt: expires})
}

func (p *pwaAPI) enrolDevice(ctx *fasthttp.RequestCtx) {
	if string(ctx.Path()) != "/devices/enroll" {
		writeJSONError(ctx, fasthttp.StatusNotFound, messages.CodeNotFound, "no such endpoint")
		return
	}
	var req enrolRequest
	if err := decodeOwnerBody(ctx, &req, maxDeviceBody, false); err != nil {
		writeJSONError(ctx, fasthttp.StatusBadRequest, messages.CodeBadRequest, err.Error())
		return
	}
	c, cancel := reqContext()
	defer cancel()
	d, err := p.devices.enrol(c, req.Code, req.Name, req.PublicKey)
	switch {
	case errors.Is(err, devices.ErrInvalidPublicKey), errors.Is(err, devices.ErrInvalidName):
		writeJSONError(ctx, fasthttp.StatusBadRequest, messages.CodeBadRequest, err.Error())
		return
	case errors.Is(err, persistence.ErrCodeInvalid):
		writeJSONError(ctx, fasthttp.StatusForbidden, messages.CodeForbidden,
			"the enrolment code is unknown, used or expired: run `silas devices add` for a new one")
		return
	case errors.Is(err, persistence.ErrDeviceExists):
		writeJSONError(ctx, fasthttp.StatusConflict, codeConflict,
			"this key is already enrolled or was revoked: generate a new key pair on the device and enrol that")
		return
	case err != nil:
		writeJSONError(ctx, fasthttp.StatusInternalServerError, messages.CodeInternal, err.Error())
		return
	}
	if err := p.audit(c, "device_enrolled", map[string]any{"device_id": d.ID, "name": d.Name}); err != nil {
		writeJSONError(ctx, fasthttp.StatusInternalServerError, messages.CodeInternal, err.Error())
		return
	}
	writeJSON(ctx, fasthttp.StatusCreated, deviceResponse{Device: viewDevice(d)})
}

func (p *pwaAPI) listDevices(ctx *fasthttp.RequestCtx) {
	if string(ctx.Path()) != "/devices" {
		writeJSONError(ctx, fasthttp.StatusNotFound, messages.CodeNotFound, "no such endpoint")
		return
	}
	c, cancel := reqContext()
	defer cancel()
	list, err := p.db.Devices().List(c)
	if err != nil {
		writeJSONError(ctx, fasthttp.StatusInternalServerError, messages.CodeInternal, err.Error())
		return
	}
	out := devicesResponse{Devices: make([]deviceView, 0, len(list))}
	for _, d := range list {
		out.Devices = append(out.Devices, viewDevice(d))
	}
	writeJSON(ctx, fasthttp.StatusOK, out)
}

// revokeDevice serves POST /devices/{id}/revoke.
func (p *pwaAPI) revokeDevice(ctx *fasthttp.RequestCtx) {
	id, ok := strings.CutSuffix(strings.TrimPrefix(string(ctx.Path()), "/devices/"), "/revoke")
	if !ok || id == "" || strings.Contains(id, "/") {
		writeJSONError(ctx, fasthttp.StatusNotFound, messages.CodeNotFound, "no such endpoint; revoke with POST /devices/{id}/revoke")
		return
	}
	c, cancel := reqContext()
	defer cancel()
	d, err := p.devices.revoke(c, id)
	switch {
	case errors.Is(err, persistence.ErrNotFound):
		writeJSONError(ctx, fasthttp.StatusNotFound, messages.CodeNotFound, fmt.Sprintf("no device %q: list them with `silas devices list`", id))
		return
	case err != nil:
		writeJSONError(ctx, fasthttp.StatusInternalServerError, messages.CodeInternal, err.Error())
		return
	}
	if err := p.audit(c, "device_revoked", map[string]any{"device_id": d.ID, "name": d.Name}); err != nil {
		writeJSONError(ctx, fasthttp.StatusInternalServerError, messages.CodeInternal, err.Error())
		return
	}
	writeJSON(ctx, fasthttp.StatusOK, deviceResponse{Device: viewDevice(d)})
}

// ownerOrDevice accepts a chat message signature by the owner key or by an
// active owner device: the registry is the only place device keys are
// trusted. Approval tokens are verified with the owner key alone (see
// runtime/approval).
func ownerOrDevice(owner func(msg, sig []byte) (string, bool), reg *deviceRegistry) func(msg, sig []byte) (string, bool) {
	return func(msg, sig []byte) (string, bool) {
		if id, ok := owner(msg, sig); ok {
			return id, true
		}
		return reg.Verify(msg, sig)
	}
}
