package telegram

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rs/zerolog"
)

// PollerConfig configures a Poller.
type PollerConfig struct {
	// Client calls getUpdates. Required.
	Client *Client
	// Store keeps the offset. Required.
	Store OffsetStore
	// Seen, optional, answers whether an update was handled already (see
	// Seen). Without it, a crash between journaling and saving the offset
	// hands the update to the handler a second time.
	Seen Seen
	// Handler handles each update. Required.
	Handler Handler
	// Timeout is the long-poll timeout, in whole seconds. Default 50s.
	Timeout time.Duration
	// MaxBackoff caps the wait after a failure. Default 30s.
	MaxBackoff time.Duration
	// Clock times the backoff; nil is the system clock.
	Clock Clock
	// Log receives failures; the zero value discards them.
	Log zerolog.Logger
}

// Poller receives updates by getUpdates long polling, the default mode (no
// public URL needed). It hands each update to the handler and confirms it
// to Telegram, by asking for the next offset, only after the handler
// returned nil and the offset was saved: a kill -9 at any point loses no
// update, and with Seen handles none twice.
type Poller struct {
	c       *Client
	d       *dispatcher
	timeout time.Duration
	maxBack time.Duration
	clock   Clock
	log     zerolog.Logger
}

// NewPoller checks cfg and returns a Poller. Start it with Run.
func NewPoller(cfg PollerConfig) (*Poller, error) {
	if cfg.Client == nil {
		return nil, fmt.Errorf("%w: the poller needs a Client", ErrInvalidConfig)
	}
	d, err := newDispatcher(cfg.Store, cfg.Seen, cfg.Handler)
	if err != nil {
		return nil, err
	}
	timeout := cfg.Timeout.Truncate(time.Second)
	if timeout <= 0 {
		timeout = 50 * time.Second
	}
	maxBack := cfg.MaxBackoff
	if maxBack <= 0 {
		maxBack = 30 * time.Second
	}
	return &Poller{c: cfg.Client, d: d, timeout: timeout, maxBack: maxBack, clock: clockOr(cfg.Clock), log: cfg.Log}, nil
}

// Run polls until ctx ends (returning ctx's error) or Telegram refuses the
// token (returning an error matching ErrUnauthorized). Other failures
// (network, 5xx, 429, a failed handler or store, ErrConflict from a second
// instance or a webhook) are logged and retried with backoff; the update
// that failed comes again.
func (p *Poller) Run(ctx context.Context) error {
	var backoff time.Duration
	fail := func(what string, err error) error {
		if ra, ok := retryAfter(err); ok {
			backoff = ra
		} else {
			backoff = min(max(2*backoff, time.Second), p.maxBack)
		}
		ev := p.log.Warn()
		if errors.Is(err, ErrConflict) {
			ev = p.log.Error()
		}
		ev.Err(err).Dur("retry_in", backoff).Msg("telegram: " + what)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-p.clock.After(backoff):
			return nil
		}
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		offset, err := p.d.nextOffset(ctx)
		if err != nil {
			if err := fail("load update offset", err); err != nil {
				return err
			}
			continue
		}
		ups, err := p.c.getUpdates(ctx, offset, p.timeout)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if errors.Is(err, ErrUnauthorized) {
				return err
			}
			if err := fail("getUpdates failed", err); err != nil {
				return err
			}
			continue
		}
		failed := false
		for _, u := range ups {
			if err := p.d.dispatch(ctx, u); err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				if err := fail("update not handled; it will come again", err); err != nil {
					return err
				}
				failed = true
				break
			}
		}
		if !failed {
			backoff = 0
		}
	}
}
