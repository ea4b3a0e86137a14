package persistence

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/silas-ai/silas/messages"
)

// ErrGoalExists means a goal with the same id is already scheduled in the
// scope. The owner removes it first (`silas goals remove <id>`), or the
// planner proposes the goal under another id.
var ErrGoalExists = errors.New("persistence: a goal with this id is already scheduled")

// Goal sources: where a scheduled goal came from.
const (
	// GoalFromPlanner is a goal the planner proposed and the owner
	// approved in chat, with its standing approval.
	GoalFromPlanner = "planner"
	// GoalFromConfig is the goal of silas.active_goal; its record only
	// keeps whether the owner paused it, the goal itself is read from the
	// file at every start.
	GoalFromConfig = "config"
)

// Goal is a scheduled goal as stored (spec 5.2.3): the goal work item the
// owner approved, where it came from and whether it is paused. Its standing
// approval token is stored next to it (the wt/ key of WorkItems.Standing),
// written with it by Add and after each verification by
// WorkItems.PutStanding, so that its execution count survives a restart.
type Goal struct {
	// Goal is the approved goal; nil in a GoalFromConfig record.
	Goal   *messages.WorkItem `json:"goal,omitempty"`
	ID     string             `json:"id"`
	Source string             `json:"source"`
	Paused bool               `json:"paused"`
	// AddedAt is when the goal was approved (or first loaded from the
	// config file); PausedAt when it was last paused.
	AddedAt  time.Time  `json:"added_at"`
	PausedAt *time.Time `json:"paused_at,omitempty"`
}

// validate checks what every stored record needs.
func (g *Goal) validate() error {
	if err := validID("goal id", g.ID); err != nil {
		return err
	}
	switch g.Source {
	case GoalFromPlanner:
		if g.Goal == nil || g.Goal.ID != g.ID || g.Goal.Type != messages.WorkGoal {
			return fmt.Errorf("goal %s: a planner goal record needs its goal work item with the same id: %w", g.ID, ErrInvalid)
		}
	case GoalFromConfig:
	default:
		return fmt.Errorf("goal %s: source %q is neither %q nor %q: %w", g.ID, g.Source, GoalFromPlanner, GoalFromConfig, ErrInvalid)
	}
	return nil
}

// Goals stores the owner's scheduled goals, one record per scope and goal
// id (key gl/<scope>\0<goal_id>, see keys.go).
type Goals struct{ d *DB }

// Goals returns the scheduled goal store.
func (d *DB) Goals() Goals { return Goals{d: d} }

// Add stores a new goal g of scope together with its standing approval
// token tok (nil: none yet), in one transaction: a goal is never scheduled
// without the approval the owner gave with it. A goal of the same id is
// ErrGoalExists and nothing is written.
func (s Goals) Add(ctx context.Context, scope string, g Goal, tok *messages.ApprovalToken) error {
	if err := validID("scope", scope); err != nil {
		return fmt.Errorf("add goal: %w", err)
	}
	if err := g.validate(); err != nil {
		return fmt.Errorf("add goal: %w", err)
	}
	val, err := encodeJSON(&g)
	if err != nil {
		return fmt.Errorf("add goal %s: %w", g.ID, err)
	}
	var tokEntry *badger.Entry
	if tok != nil {
		if tokEntry, err = standingEntry(scope, g.ID, tok); err != nil {
			return fmt.Errorf("add goal %s: %w", g.ID, err)
		}
	}
	k := key2(pfxGoal, scope, g.ID)
	err = s.d.updateSized(ctx, int64(len(val))+defaultWriteSize, func(txn *wtxn) error {
		switch found, err := exists(txn, k); {
		case err != nil:
			return err
		case found:
			return ErrGoalExists
		}
		if err := txn.Set(k, val); err != nil {
			return err
		}
		if tokEntry != nil {
			return txn.SetEntry(tokEntry)
		}
		return txn.Delete(key2(pfxStandingToken, scope, g.ID)) // a stale token of an earlier goal of that id
	})
	if err != nil {
		return fmt.Errorf("add goal %s: %w", g.ID, err)
	}
	return nil
}

// Put stores g, replacing the record of the same id (pause, resume, the
// config goal's record). Its standing token is left as it is.
func (s Goals) Put(ctx context.Context, scope string, g Goal) error {
	if err := validID("scope", scope); err != nil {
		return fmt.Errorf("put goal: %w", err)
	}
	if err := g.validate(); err != nil {
		return fmt.Errorf("put goal: %w", err)
	}
	val, err := encodeJSON(&g)
	if err != nil {
		return fmt.Errorf("put goal %s: %w", g.ID, err)
	}
	err = s.d.updateSized(ctx, int64(len(val))+defaultWriteSize, func(txn *wtxn) error {
		return txn.Set(key2(pfxGoal, scope, g.ID), val)
	})
	if err != nil {
		return fmt.Errorf("put goal %s: %w", g.ID, err)
	}
	return nil
}

// Get returns the goal id of scope, or ErrNotFound.
func (s Goals) Get(ctx context.Context, scope, id string) (Goal, error) {
	if err := errors.Join(validID("scope", scope), validID("goal id", id)); err != nil {
		return Goal{}, fmt.Errorf("get goal: %w", err)
	}
	var g Goal
	err := s.d.view(ctx, func(txn *badger.Txn) error {
		return getValue(txn, key2(pfxGoal, scope, id), func(v []byte) error { return decodeJSON(v, &g) })
	})
	if err != nil {
		return Goal{}, fmt.Errorf("get goal %s: %w", id, err)
	}
	return g, nil
}

// List returns the goals of scope, ordered by id.
func (s Goals) List(ctx context.Context, scope string) ([]Goal, error) {
	if err := validID("scope", scope); err != nil {
		return nil, fmt.Errorf("list goals: %w", err)
	}
	all, err := scanJSON[Goal](ctx, s.d, scopePrefix(pfxGoal, scope), "goal")
	if err != nil {
		return nil, fmt.Errorf("list goals of %s: %w", scope, err)
	}
	return all, nil
}

// Remove deletes the goal id of scope and its standing token in one
// transaction; a missing goal is ErrNotFound.
func (s Goals) Remove(ctx context.Context, scope, id string) error {
	if err := errors.Join(validID("scope", scope), validID("goal id", id)); err != nil {
		return fmt.Errorf("remove goal: %w", err)
	}
	k := key2(pfxGoal, scope, id)
	err := s.d.update(ctx, func(txn *wtxn) error {
		switch found, err := exists(txn, k); {
		case err != nil:
			return err
		case !found:
			return ErrNotFound
		}
		if err := txn.Delete(k); err != nil {
			return err
		}
		return txn.Delete(key2(pfxStandingToken, scope, id))
	})
	if err != nil {
		return fmt.Errorf("remove goal %s: %w", id, err)
	}
	return nil
}

// standingEntry is the wt/ entry of a goal's standing token, as
// WorkItems.PutStanding writes it: forgotten a second after it expires.
func standingEntry(scope, goalID string, tok *messages.ApprovalToken) (*badger.Entry, error) {
	ttl := time.Until(tok.ExpiresAt)
	if ttl <= 0 {
		return nil, fmt.Errorf("standing token of %s expired at %s: %w", goalID, tok.ExpiresAt.Format(time.RFC3339), ErrInvalid)
	}
	val, err := encodeJSON(tok)
	if err != nil {
		return nil, fmt.Errorf("standing token of %s: %w", goalID, err)
	}
	return ttlEntry(key2(pfxStandingToken, scope, goalID), val, ttl+time.Second), nil
}
