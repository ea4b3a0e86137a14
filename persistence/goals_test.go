package persistence

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/silas-ai/silas/messages"
)

func testGoal(id string) Goal {
	w := messages.NewWorkItem(id, messages.WorkGoal, "Keep "+id)
	every := "@every 1m"
	w.Schedule = &every
	return Goal{Goal: w, ID: id, Source: GoalFromPlanner, AddedAt: time.Now().UTC().Truncate(time.Second)}
}

func testStanding(id string, used int) *messages.ApprovalToken {
	return &messages.ApprovalToken{TokenID: "tok-" + id, WorkItemID: id, Scope: messages.ApprovalStanding,
		ExpiresAt: time.Now().Add(time.Hour).UTC(), ExecutionsUsed: used, MaxExecutions: 5}
}

// The goal store on both backends: a goal is added with its standing
// token in one write, a second goal of the same id is refused and changes
// nothing, scopes stay apart, and Remove takes the token with the goal.
func TestGoals(t *testing.T) {
	for _, onDisk := range []bool{false, true} {
		name := "memory"
		if onDisk {
			name = "disk"
		}
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, onDisk)
			ctx := t.Context()
			gs, wi := h.db.Goals(), h.db.WorkItems()
			if got, err := gs.List(ctx, "owner"); err != nil || len(got) != 0 {
				t.Fatalf("List before Add = %v, %v", got, err)
			}
			for _, id := range []string{"g-b", "g-a"} {
				if err := gs.Add(ctx, "owner", testGoal(id), testStanding(id, 1)); err != nil {
					t.Fatal(err)
				}
			}
			if err := gs.Add(ctx, "other", testGoal("g-a"), nil); err != nil {
				t.Fatalf("the same id in another scope: %v", err)
			}
			again := testGoal("g-a")
			again.Goal.Title = "replaced"
			if err := gs.Add(ctx, "owner", again, testStanding("g-a", 0)); !errors.Is(err, ErrGoalExists) {
				t.Fatalf("Add of an existing id: %v, want ErrGoalExists", err)
			}
			if tok, err := wi.Standing(ctx, "owner", "g-a"); err != nil || tok.ExecutionsUsed != 1 {
				t.Fatalf("standing token after the refused Add = %+v, %v; want the first one (1 used)", tok, err)
			}
			got, err := gs.List(ctx, "owner")
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 2 || got[0].ID != "g-a" || got[1].ID != "g-b" || got[0].Goal.Title != "Keep g-a" || *got[0].Goal.Schedule != "@every 1m" {
				t.Fatalf("List(owner) = %+v, want g-a then g-b as added", got)
			}

			g := got[0]
			now := time.Now().UTC()
			g.Paused, g.PausedAt = true, &now
			if err := gs.Put(ctx, "owner", g); err != nil {
				t.Fatal(err)
			}
			if h.dir != "" {
				h.reopen()
				gs, wi = h.db.Goals(), h.db.WorkItems()
			}
			if r, err := gs.Get(ctx, "owner", "g-a"); err != nil || !r.Paused || r.PausedAt == nil {
				t.Fatalf("Get after pause = %+v, %v", r, err)
			}
			if tok, err := wi.Standing(ctx, "owner", "g-a"); err != nil || tok.ExecutionsUsed != 1 {
				t.Fatalf("standing token after Put = %+v, %v; want it untouched", tok, err)
			}

			if err := gs.Remove(ctx, "owner", "g-a"); err != nil {
				t.Fatal(err)
			}
			if _, err := gs.Get(ctx, "owner", "g-a"); !errors.Is(err, ErrNotFound) {
				t.Fatalf("Get after Remove: %v", err)
			}
			if _, err := wi.Standing(ctx, "owner", "g-a"); !errors.Is(err, ErrNotFound) {
				t.Fatalf("standing token after Remove: %v, want it gone", err)
			}
			if err := gs.Remove(ctx, "owner", "g-a"); !errors.Is(err, ErrNotFound) {
				t.Fatalf("Remove twice: %v, want ErrNotFound", err)
			}
			if _, err := gs.Get(ctx, "other", "g-a"); err != nil {
				t.Fatalf("the other scope's goal went too: %v", err)
			}
			// A new goal of a removed id starts without the old token.
			if err := wi.PutStanding(ctx, "owner", "g-a", testStanding("g-a", 4)); err != nil {
				t.Fatal(err)
			}
			if err := gs.Add(ctx, "owner", testGoal("g-a"), nil); err != nil {
				t.Fatal(err)
			}
			if _, err := wi.Standing(ctx, "owner", "g-a"); !errors.Is(err, ErrNotFound) {
				t.Fatalf("a stale standing token outlived a new goal of its id: %v", err)
			}
		})
	}
}

func TestGoalsInvalid(t *testing.T) {
	h := newHarness(t, false)
	ctx := t.Context()
	gs := h.db.Goals()
	task := testGoal("g-1")
	task.Goal.Type = messages.WorkTask
	other := testGoal("g-1")
	other.ID = "g-2"
	noSource := testGoal("g-1")
	noSource.Source = "model"
	expired := testStanding("g-1", 0)
	expired.ExpiresAt = time.Now().Add(-time.Minute)
	for name, add := range map[string]func() error{
		"empty scope":     func() error { return gs.Add(ctx, "", testGoal("g-1"), nil) },
		"NUL in id":       func() error { return gs.Add(ctx, "owner", testGoal("g\x001"), nil) },
		"not a goal":      func() error { return gs.Add(ctx, "owner", task, nil) },
		"id mismatch":     func() error { return gs.Add(ctx, "owner", other, nil) },
		"unknown source":  func() error { return gs.Put(ctx, "owner", noSource) },
		"no goal":         func() error { return gs.Put(ctx, "owner", Goal{ID: "g-1", Source: GoalFromPlanner}) },
		"expired token":   func() error { return gs.Add(ctx, "owner", testGoal("g-1"), expired) },
		"remove empty id": func() error { return gs.Remove(ctx, "owner", "") },
	} {
		if err := add(); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
	if err := gs.Put(ctx, "owner", Goal{ID: "config-goal", Source: GoalFromConfig}); err != nil {
		t.Fatalf("a config goal's record without its work item: %v", err)
	}
	if got, err := gs.List(ctx, "owner"); err != nil || len(got) != 1 {
		t.Fatalf("after the refusals List = %+v, %v; want the config record only", got, err)
	}
}

// TestGoalKeyPrefixIsDisjoint: the goal prefix overlaps no other store's.
func TestGoalKeyPrefixIsDisjoint(t *testing.T) {
	others := []string{pfxMeta, keySchemaVersion, pfxMigration, keyAuditHead, keyProbe, keySeqQueue, keySeqOutbox, pfxChronicle,
		pfxChronicleScope, pfxSnapshot, pfxSession, pfxAudit, pfxQueue, pfxQueueIndex, pfxDeadLetter, pfxAcked, pfxProcessed,
		pfxOutbox, pfxOutboxIndex, pfxNonce, pfxMemory, pfxPosting, pfxMemoryTime, pfxDocFreq, pfxMemStats, pfxUsageTotal,
		pfxUsageDay, pfxPersonaState, pfxPersonaEvent, pfxPersonaIndex, pfxWorkItem, pfxStandingToken, pfxDevice,
		pfxDeviceCode, pfxSecureInput, keyOwnerVisit, pfxSkill, pfxSkillRequest, pfxConnection, keyTelegramOffset,
		keyTelegramPairing, keyTelegramOwner, pfxTelegramSeen, pfxTelegramUsed, pfxTelegramCustomer, pfxTelegramAwaiting}
	for _, o := range others {
		if strings.HasPrefix(o, pfxGoal) || strings.HasPrefix(pfxGoal, o) {
			t.Errorf("%q and %q overlap", pfxGoal, o)
		}
	}
}
