package persistence

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/silas-ai/silas/messages"
)

// The conformance suite runs every store test against an on-disk Badger in
// t.TempDir() and an in-memory Badger. Tests that need a reopen run on disk
// only, because an in-memory database does not survive Close.

// harness is one fresh database for one test.
type harness struct {
	t    *testing.T
	db   *DB
	dir  string // "" for in-memory
	opts Options
}

func newHarness(t *testing.T, onDisk bool) *harness {
	t.Helper()
	h := &harness{t: t}
	if onDisk {
		h.dir = t.TempDir()
		h.opts = Options{Dir: h.dir}
	} else {
		h.opts = Options{InMemory: true}
	}
	db, err := Open(t.Context(), h.opts)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	h.db = db
	t.Cleanup(func() {
		if err := h.db.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return h
}

// reopen closes and reopens the on-disk database.
func (h *harness) reopen() {
	h.t.Helper()
	if err := h.db.Close(); err != nil {
		h.t.Fatalf("close: %v", err)
	}
	db, err := Open(h.t.Context(), h.opts)
	if err != nil {
		h.t.Fatalf("reopen: %v", err)
	}
	h.db = db
}

type suite struct {
	name string
	run  func(t *testing.T, h *harness)
}

// conformanceSuites run on both backends.
func conformanceSuites() []suite {
	return []suite{
		{"ChronicleAppendRecent", testChronicleAppendRecent},
		{"ChronicleInvalid", testChronicleInvalid},
		{"ChronicleConcurrentScopesGapFree", testChronicleConcurrentGapFree},
		{"Snapshots", testSnapshots},
		{"Sessions", testSessions},
		{"AuditAppendRangeVerify", testAuditAppendRangeVerify},
		{"AuditTamper", testAuditTamper},
		{"AuditConcurrentAppendsKeepOneChain", testAuditConcurrent},
		{"AuditInvalid", testAuditInvalid},
		{"QueueEnqueueDedup", testQueueEnqueueDedup},
		{"QueueLifecycle", testQueueLifecycle},
		{"QueuePendingFIFO", testQueuePendingFIFO},
		{"QueueConcurrentEnqueueOneWins", testQueueConcurrentEnqueue},
		{"QueueProcessedMarkers", testQueueProcessed},
		{"Outbox", testOutbox},
		{"Nonces", testNonces},
		{"NoncesConcurrentConsume", testNoncesConcurrentConsume},
		{"NoncesPrune", testNoncesPrune},
		{"MemoryCRUD", testMemoryCRUD},
		{"MemorySearch", testMemorySearch},
		{"MemoryScopeIsolation", testMemoryScopeIsolation},
		{"MemoryReindexMigration", testMemoryReindexMigration},
		{"Usage", testUsage},
		{"UsageConcurrentAdds", testUsageConcurrentAdds},
		{"UsageDayRollover", testUsageDayRollover},
		{"UsageDirtyStageNotCached", testUsageDirtyStageNotCached},
		{"WorkItems", testWorkItems},
		{"PersonaState", testPersonaState},
		{"PersonaEvents", testPersonaEvents},
		{"PersonaEventsOneGroup", testPersonaEventsOneGroup},
		{"PersonaConcurrentScopes", testPersonaConcurrentScopes},
		{"CommitTurn", testCommitTurn},
		{"CommitTurnDuplicate", testCommitTurnDuplicate},
		{"CommitTurnDelivered", testCommitTurnDelivered},
		{"CommitTurnAtomicOnFailure", testCommitTurnAtomic},
		{"Closed", testClosed},
		{"GroupIsolation", testGroupIsolation},
		{"GroupSameScopeOrder", testGroupSameScopeOrder},
		{"GroupPanicIsolated", testGroupPanicIsolated},
		{"GroupConflictRetried", testGroupConflictRetried},
		{"GroupCtxCancel", testGroupCtxCancel},
	}
}

// diskSuites need a database that survives Close.
func diskSuites() []suite {
	return []suite{
		{"ReopenKeepsState", testReopenKeepsState},
		{"UsageReopenContinues", testUsageReopenContinues},
		{"PersonaReopen", testPersonaReopen},
		{"WorkItemsReopen", testWorkItemsReopen},
		{"AuditTamperAfterReopen", testAuditTamperAfterReopen},
		{"MigrationsRecorded", testMigrationsRecorded},
		{"MigrationRefusals", testMigrationRefusals},
		{"MigrationAppliesNewVersion", testMigrationAppliesNew},
		{"CloseDrainsPending", testCloseDrains},
	}
}

func TestConformance(t *testing.T) {
	for _, backend := range []struct {
		name   string
		onDisk bool
	}{{"disk", true}, {"memory", false}} {
		t.Run(backend.name, func(t *testing.T) {
			all := conformanceSuites()
			if backend.onDisk {
				all = append(all, diskSuites()...)
			}
			for _, s := range all {
				t.Run(s.name, func(t *testing.T) { s.run(t, newHarness(t, backend.onDisk)) })
			}
		})
	}
}

// --- shared fixtures ---

func ctxItem(id string, turn int) messages.ContextItem {
	return messages.ContextItem{
		CtxID: id, Zone: messages.ZoneChronicle, Content: "[owner] u: " + id,
		TokenCount: 3, CreatedAt: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC),
		TurnNumber: turn, Source: "user", Taint: messages.TaintOwner, Kind: messages.KindMessage,
	}
}

func memItem(id, content string, created time.Time) messages.MemoryItem {
	return messages.MemoryItem{
		MemoryID: id, Content: content, MemoryType: messages.MemoryFact,
		ReingestionTier: messages.TierActive, TrustLevel: messages.TrustWorking,
		Taint: messages.TaintOwner, CreatedAt: created, UpdatedAt: created,
		SourceKind: messages.SourceConversationRaw,
	}
}

// chronicleSeqs reads the raw chronicle sequence numbers of scope.
func chronicleSeqs(t *testing.T, db *DB, scope string) []uint64 {
	t.Helper()
	var seqs []uint64
	err := db.bdb.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: scopePrefix(pfxChronicle, scope)})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			s, err := seqSuffix(it.Item().Key())
			if err != nil {
				return err
			}
			seqs = append(seqs, s)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("read chronicle keys: %v", err)
	}
	return seqs
}

func assertGapFree(t *testing.T, scope string, seqs []uint64, want int) {
	t.Helper()
	if len(seqs) != want {
		t.Fatalf("scope %s: %d entries, want %d", scope, len(seqs), want)
	}
	for i, s := range seqs {
		if s != uint64(i+1) {
			t.Fatalf("scope %s: entry %d has seq %d, want %d", scope, i, s, i+1)
		}
	}
}

func testChronicleConcurrentGapFree(t *testing.T, h *harness) {
	const scopes, perScope = 50, 40
	ctx := t.Context()
	var wg sync.WaitGroup
	errs := make(chan error, scopes)
	for s := range scopes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			scope := fmt.Sprintf("scope-%02d", s)
			for i := range perScope {
				// Alternate plain appends and turn commits: both
				// share the scope's sequence.
				item := ctxItem(fmt.Sprintf("%s-%d", scope, i), i)
				var err error
				if i%2 == 0 {
					err = h.db.Chronicle().Append(ctx, scope, item)
				} else {
					err = h.db.CommitTurn(ctx, TurnCommit{Scope: scope, Chronicle: []messages.ContextItem{item}})
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for s := range scopes {
		scope := fmt.Sprintf("scope-%02d", s)
		assertGapFree(t, scope, chronicleSeqs(t, h.db, scope), perScope)
		items, err := h.db.Chronicle().Recent(ctx, scope, perScope)
		if err != nil {
			t.Fatal(err)
		}
		for i, it := range items {
			if want := fmt.Sprintf("%s-%d", scope, i); it.CtxID != want {
				t.Fatalf("scope %s item %d = %s, want %s", scope, i, it.CtxID, want)
			}
		}
	}
	got, err := h.db.Chronicle().Scopes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != scopes {
		t.Fatalf("Scopes() returned %d scopes, want %d", len(got), scopes)
	}
}
