package approval

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"time"

	"github.com/silas-ai/silas/messages"
)

// Signer signs and verifies approval tokens with the owner's Ed25519 key.
// *keys.Manager satisfies it: both methods use the owner key alone (see
// "Signing key" in the package documentation).
type Signer interface {
	// Sign returns the Ed25519 signature of msg by the owner key.
	Sign(msg []byte) ([]byte, error)
	// VerifyOwnerSignature reports whether sig is a valid signature of msg by
	// the owner key, and which key made it.
	VerifyOwnerSignature(msg, sig []byte) (keyID string, ok bool)
}

// Config holds the engine's settings (spec section 11).
type Config struct {
	// DefaultTTL is how long a token is valid unless IssueToken is given
	// WithTTL (approval.default_ttl_minutes). Default 30 minutes.
	DefaultTTL time.Duration
	// MaxExecutions is max_executions of every token except standing ones
	// (approval.max_executions). Default 1.
	MaxExecutions int
	// MaxStandingExecutions caps max_executions of a standing token
	// (autonomy.max_standing_executions). Default 100.
	MaxStandingExecutions int
	// NonceTTL is how long a consumed execution nonce is remembered beyond
	// the token's expiry (nonce_store.ttl_minutes); at least DefaultTTL.
	// Default 40 minutes.
	NonceTTL time.Duration
	// ScopeMinStrength is the minimum approval strength per scope
	// (approval.scope_min_strength); scopes not listed need "tap". Every
	// value must be "tap", the only strength of this spec.
	ScopeMinStrength map[messages.ApprovalScope]messages.ApprovalStrength
}

// DefaultConfig returns the defaults of spec section 11.
func DefaultConfig() Config {
	return Config{
		DefaultTTL:            30 * time.Minute,
		MaxExecutions:         1,
		MaxStandingExecutions: 100,
		NonceTTL:              40 * time.Minute,
	}
}

// Validate checks c and names the offending setting.
func (c Config) Validate() error {
	switch {
	case c.DefaultTTL <= 0:
		return fmt.Errorf("%w: approval.default_ttl_minutes must be positive, got %s", ErrInvalidConfig, c.DefaultTTL)
	case c.MaxExecutions < 1:
		return fmt.Errorf("%w: approval.max_executions must be at least 1, got %d", ErrInvalidConfig, c.MaxExecutions)
	case c.MaxStandingExecutions < 1:
		return fmt.Errorf("%w: autonomy.max_standing_executions must be at least 1, got %d", ErrInvalidConfig, c.MaxStandingExecutions)
	case c.NonceTTL < c.DefaultTTL:
		return fmt.Errorf("%w: nonce_store.ttl_minutes (%s) must be at least approval.default_ttl_minutes (%s)",
			ErrInvalidConfig, c.NonceTTL, c.DefaultTTL)
	}
	for scope, s := range c.ScopeMinStrength {
		if err := scope.Validate(); err != nil {
			return fmt.Errorf("%w: approval.scope_min_strength: %w", ErrInvalidConfig, err)
		}
		if err := s.Validate(); err != nil {
			return fmt.Errorf("%w: approval.scope_min_strength.%s: %w", ErrInvalidConfig, scope, err)
		}
	}
	return nil
}

// Engine is the approval engine of spec 5.11. It is safe for concurrent use
// as far as its Signer and NonceStore are; a token value itself must not be
// verified concurrently (Verify updates it).
type Engine struct {
	signer Signer
	nonces NonceStore
	now    func() time.Time
	rand   io.Reader
	cfg    Config
}

// Option configures an Engine.
type Option func(*Engine)

// WithRandom sets the source of token IDs and nonces (default
// crypto/rand.Reader). Only tests pass anything else.
func WithRandom(r io.Reader) Option { return func(e *Engine) { e.rand = r } }

// New returns an engine that signs with signer, consumes execution nonces in
// nonces and reads the time from now.
func New(signer Signer, nonces NonceStore, now func() time.Time, cfg Config, opts ...Option) (*Engine, error) {
	switch {
	case signer == nil:
		return nil, fmt.Errorf("%w: no signer", ErrInvalidConfig)
	case nonces == nil:
		return nil, fmt.Errorf("%w: no nonce store", ErrInvalidConfig)
	case now == nil:
		return nil, fmt.Errorf("%w: no clock", ErrInvalidConfig)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	e := &Engine{signer: signer, nonces: nonces, now: now, rand: rand.Reader, cfg: cfg}
	for _, o := range opts {
		o(e)
	}
	return e, nil
}

// randomHex returns n random bytes from the engine's source as hex.
func (e *Engine) randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := io.ReadFull(e.rand, b); err != nil {
		return "", fmt.Errorf("approval: read random bytes: %w", err)
	}
	return hex.EncodeToString(b), nil
}
