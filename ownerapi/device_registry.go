package ownerapi

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/silas-ai/silas/persistence"
	"github.com/silas-ai/silas/runtime/devices"
)

// DeviceRegistry is the daemon's view of the active owner device keys. It
// is the only writer of devices (the CLI goes through the daemon's HTTP
// API, since Badger admits one process), so it keeps the verifying Set in
// memory and swaps it after every change it makes: a revocation applies to
// the next message, with no restart and no database read per message.
type DeviceRegistry struct {
	db  *persistence.DB
	log zerolog.Logger

	mu  sync.Mutex // serialises changes and reloads
	set atomic.Pointer[devices.Set]
}

// NewDeviceRegistry loads the active device keys from db.
func NewDeviceRegistry(ctx context.Context, db *persistence.DB, log zerolog.Logger) (*DeviceRegistry, error) {
	r := &DeviceRegistry{db: db, log: log}
	r.set.Store(devices.NewSet(nil))
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.reloadLocked(ctx); err != nil {
		return nil, fmt.Errorf("load owner devices: %w", err)
	}
	return r, nil
}

func (r *DeviceRegistry) reloadLocked(ctx context.Context) error {
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
func (r *DeviceRegistry) Verify(msg, sig []byte) (string, bool) { return r.set.Load().Verify(msg, sig) }

// enrol redeems a code for pub and makes the key active.
func (r *DeviceRegistry) enrol(ctx context.Context, code, name string, pubB64 string) (persistence.Device, error) {
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
func (r *DeviceRegistry) revoke(ctx context.Context, id string) (persistence.Device, error) {
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
