package telegram

import (
	"context"
	"fmt"
	"sync"
)

// OffsetStore keeps the update_id of the last update handled, so that
// polling resumes after it when Silas restarts. The runtime backs it with
// Badger.
type OffsetStore interface {
	// Load returns the last update_id saved, 0 when none was.
	Load(ctx context.Context) (int64, error)
	// Save records updateID as handled.
	Save(ctx context.Context, updateID int64) error
}

// Seen tells whether an update was handled already, by its update_id. The
// runtime answers from its journal (the handler journals each update under
// its update_id). It closes the one window the offset leaves open: a crash
// after the handler journaled an update but before its offset was saved
// brings the update back, and Seen keeps it from being handled twice.
type Seen interface {
	Seen(ctx context.Context, updateID int64) (bool, error)
}

// Handler handles one update. It returns nil once the update is journaled
// (durable); only then is the update confirmed to Telegram. An error makes
// the update come again after a backoff, so return one only for failures
// that may pass (storage); an update that cannot be handled (unknown kind,
// bad input) is journaled or dropped by the handler, which returns nil.
type Handler func(ctx context.Context, u Update) error

// recentLen is how many handled update_ids a dispatcher remembers in memory.
const recentLen = 1024

// dispatcher is the contract shared by Poller and Webhook: skip updates
// handled already, call the handler, save the offset once it returned nil.
// Calls are serialised, so updates are handled one at a time, in the order
// Telegram sends them.
type dispatcher struct {
	store  OffsetStore
	seen   Seen
	handle Handler

	mu     sync.Mutex
	loaded bool
	last   int64 // last update_id saved
	recent map[int64]bool
	ring   []int64
}

func newDispatcher(store OffsetStore, seen Seen, h Handler) (*dispatcher, error) {
	if store == nil || h == nil {
		return nil, fmt.Errorf("%w: an OffsetStore and a Handler are required", ErrInvalidConfig)
	}
	return &dispatcher{store: store, seen: seen, handle: h, recent: map[int64]bool{}}, nil
}

// nextOffset is the offset for the next getUpdates: one past the last
// update saved, or 0 (all pending updates) when none was.
func (d *dispatcher) nextOffset(ctx context.Context) (int64, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.loadLocked(ctx); err != nil {
		return 0, err
	}
	if d.last == 0 {
		return 0, nil
	}
	return d.last + 1, nil
}

func (d *dispatcher) loadLocked(ctx context.Context) error {
	if d.loaded {
		return nil
	}
	last, err := d.store.Load(ctx)
	if err != nil {
		return fmt.Errorf("telegram: load update offset: %w", err)
	}
	d.last, d.loaded = last, true
	return nil
}

// dispatch handles u unless it was handled already, and saves its offset.
func (d *dispatcher) dispatch(ctx context.Context, u Update) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.loadLocked(ctx); err != nil {
		return err
	}
	if d.recent[u.ID] {
		return d.saveLocked(ctx, u.ID)
	}
	if d.seen != nil {
		seen, err := d.seen.Seen(ctx, u.ID)
		if err != nil {
			return fmt.Errorf("telegram: check update %d: %w", u.ID, err)
		}
		if seen {
			d.remember(u.ID)
			return d.saveLocked(ctx, u.ID)
		}
	}
	if err := d.handle(ctx, u); err != nil {
		return fmt.Errorf("telegram: handle update %d: %w", u.ID, err)
	}
	d.remember(u.ID)
	return d.saveLocked(ctx, u.ID)
}

// saveLocked records id as the last update handled. Every handled update
// is saved, not only higher ones: Telegram may restart update_ids lower
// after a week without updates.
func (d *dispatcher) saveLocked(ctx context.Context, id int64) error {
	if d.last == id {
		return nil
	}
	if err := d.store.Save(ctx, id); err != nil {
		return fmt.Errorf("telegram: save update offset %d: %w", id, err)
	}
	d.last = id
	return nil
}

func (d *dispatcher) remember(id int64) {
	if len(d.ring) == recentLen {
		delete(d.recent, d.ring[0])
		d.ring = d.ring[1:]
	}
	d.ring = append(d.ring, id)
	d.recent[id] = true
}
