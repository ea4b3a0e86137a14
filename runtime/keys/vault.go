package keys

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/silas-ai/silas/persistence"
)

// Vault holds credentials by keystore ref_id (spec 0.5, 5.10.1): the
// secure-input requests are journaled in Badger, the values live in the
// keystore (one 0600 file per value under <data_dir>/keys), never in
// Badger, logs, audit, model context or a socket.
//
// A connection setup asks for a secret with Request; the owner's browser
// or the CLI posts the value (POST /secrets/{ref_id}) and the web handler
// stores it with Fulfil. Connection scripts' credentials (OAuth tokens)
// are kept with PutCredential under the connection's ref.
type Vault struct {
	db *persistence.DB
	ks *FileKeystore
	// mu serialises fulfilments, so that of two posts for one ref exactly
	// one writes the keystore.
	mu sync.Mutex
}

// NewVault returns the vault over db's secure-input requests and ks.
func NewVault(db *persistence.DB, ks *FileKeystore) *Vault { return &Vault{db: db, ks: ks} }

// VaultKeyName maps a ref id (which may use upper case, longer than the
// keystore allows) to its keystore name.
func VaultKeyName(ref string) string {
	sum := sha256.Sum256([]byte("silas-secure-input:" + ref))
	return "secret-" + hex.EncodeToString(sum[:20])
}

// Request records a pending secure-input request.
func (v *Vault) Request(ctx context.Context, r persistence.SecureInputRequest) error {
	return v.db.SecureInputs().Create(ctx, r)
}

// Fulfil stores value for the pending request ref: persistence.ErrNotFound
// for an unknown ref, persistence.ErrFulfilled for one already answered.
func (v *Vault) Fulfil(ctx context.Context, ref string, value []byte) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	r, err := v.db.SecureInputs().Get(ctx, ref)
	if err != nil {
		return err
	}
	if r.FulfilledAt != nil {
		return fmt.Errorf("secure input %s: %w", ref, persistence.ErrFulfilled)
	}
	// The value is written before the request is marked fulfilled: a crash
	// in between leaves the request pending and the owner can post again,
	// which overwrites the file.
	if err := v.ks.Put(VaultKeyName(ref), value); err != nil {
		return fmt.Errorf("store secret for %s: %w", ref, err)
	}
	return v.db.SecureInputs().MarkFulfilled(ctx, ref, time.Now())
}

// Value returns the stored secret of a fulfilled request.
func (v *Vault) Value(ctx context.Context, ref string) ([]byte, error) {
	r, err := v.db.SecureInputs().Get(ctx, ref)
	if err != nil {
		return nil, err
	}
	if r.FulfilledAt == nil {
		return nil, fmt.Errorf("secure input %s is not fulfilled yet: %w", ref, persistence.ErrNotFound)
	}
	return v.ks.Get(VaultKeyName(ref))
}

// Cancel forgets request ref and removes its value if one was stored (the
// owner cancelled the setup, spec 5.10.1). Cancelling an unknown ref is no
// error.
func (v *Vault) Cancel(ctx context.Context, ref string) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if err := persistence.CheckRefID(ref); err != nil {
		return nil // no such request can exist
	}
	if err := v.remove(ref); err != nil {
		return err
	}
	return v.db.SecureInputs().Delete(ctx, ref)
}

// Credential returns the value stored under ref, by secure input or by
// PutCredential; an error wrapping ErrNotFound when there is none.
func (v *Vault) Credential(ref string) ([]byte, error) {
	if err := persistence.CheckRefID(ref); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotFound, err)
	}
	return v.ks.Get(VaultKeyName(ref))
}

// PutCredential stores value under ref, replacing what was there.
func (v *Vault) PutCredential(ref string, value []byte) error {
	if err := persistence.CheckRefID(ref); err != nil {
		return err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.ks.Put(VaultKeyName(ref), value)
}

// DeleteCredential removes the value of ref and any secure-input request
// for it; a missing one is no error.
func (v *Vault) DeleteCredential(ctx context.Context, ref string) error {
	return v.Cancel(ctx, ref)
}

func (v *Vault) remove(ref string) error {
	path := filepath.Join(v.ks.Dir(), VaultKeyName(ref))
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove secret of %s: %w", ref, err)
	}
	return nil
}
