package persistence

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/silas-ai/silas/skills/manifest"
)

// SkillRequest is a skill_install card put to the owner and not yet
// answered (spec 10.4). It is journaled before the card goes out, so that
// a restart puts the same card (same request id, same expiry) back instead
// of dropping it; it is deleted when the request ends.
type SkillRequest struct {
	RequestID string `json:"request_id"`
	Name      string `json:"name"`
	// Hash is the skill hash the card showed: on restart the directory is
	// validated again and the card comes back only if it still hashes so.
	Hash string `json:"hash"`
	// Dir is the validated skill directory; Stage, when set, the staging
	// directory (under the data dir) that holds it and goes with the
	// request.
	Dir   string `json:"dir"`
	Stage string `json:"stage,omitempty"`
	// Origin is the card's origin: local, imported or skill-maker.
	Origin     string `json:"origin"`
	WorkItemID string `json:"work_item_id,omitempty"`
	// Transformation is an import's transformation report, as the card
	// showed it (JSON), so the restored card shows it too.
	Transformation json.RawMessage `json:"transformation,omitempty"`
	CreatedAt      time.Time       `json:"created_at"`
	ExpiresAt      time.Time       `json:"expires_at"`
}

func (r SkillRequest) validate() error {
	if err := validID("request id", r.RequestID); err != nil {
		return err
	}
	if err := manifest.ValidName(r.Name); err != nil {
		return err
	}
	if r.Dir == "" || r.Hash == "" || r.ExpiresAt.IsZero() {
		return fmt.Errorf("skill request %s: dir, hash and expires_at are required", r.RequestID)
	}
	return nil
}

// SkillRequests stores the pending skill_install requests.
type SkillRequests struct{ d *DB }

// SkillRequests returns the store of pending skill install requests.
func (d *DB) SkillRequests() SkillRequests { return SkillRequests{d: d} }

// Put journals r (ErrInvalid when it is incomplete).
func (s SkillRequests) Put(ctx context.Context, r SkillRequest) error {
	if err := r.validate(); err != nil {
		return fmt.Errorf("put skill request: %w: %w", ErrInvalid, err)
	}
	val, err := encodeJSON(&r)
	if err != nil {
		return fmt.Errorf("put skill request %s: %w", r.RequestID, err)
	}
	k := key1(pfxSkillRequest, r.RequestID)
	if err := s.d.updateSized(ctx, int64(len(val))+defaultWriteSize, func(txn *wtxn) error { return txn.Set(k, val) }); err != nil {
		return fmt.Errorf("put skill request %s: %w", r.RequestID, err)
	}
	return nil
}

// List returns the pending requests, oldest first. A record that does not
// decode or validate is an error: the caller decides to drop it.
func (s SkillRequests) List(ctx context.Context) ([]SkillRequest, error) {
	all, err := scanJSON[SkillRequest](ctx, s.d, []byte(pfxSkillRequest), "skill request")
	if err != nil {
		return nil, fmt.Errorf("list skill requests: %w", err)
	}
	out := all[:0]
	for _, r := range all {
		if err := r.validate(); err != nil {
			return nil, fmt.Errorf("list skill requests: %w: %v", ErrCorrupt, err)
		}
		out = append(out, r)
	}
	slices.SortStableFunc(out, func(a, b SkillRequest) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return out, nil
}

// Delete removes the request id; deleting a missing one is no error.
func (s SkillRequests) Delete(ctx context.Context, id string) error {
	if err := validID("request id", id); err != nil {
		return fmt.Errorf("delete skill request: %w", err)
	}
	if err := s.d.update(ctx, func(txn *wtxn) error { return txn.Delete(key1(pfxSkillRequest, id)) }); err != nil {
		return fmt.Errorf("delete skill request %s: %w", id, err)
	}
	return nil
}
