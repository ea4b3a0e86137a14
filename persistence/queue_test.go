package persistence

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/silas-ai/silas/messages"
)

func qrec(scope, id string) QueueRecord {
	return QueueRecord{MessageID: id, ScopeID: scope, TraceID: "tr-" + id, Kind: "user_message", Taint: messages.TaintAuth, Payload: []byte("hi " + id)}
}

func mustEnqueue(t *testing.T, h *harness, r QueueRecord, wantDup bool) {
	t.Helper()
	dup, err := h.db.Queue().Enqueue(t.Context(), r)
	if err != nil {
		t.Fatalf("enqueue %s: %v", r.MessageID, err)
	}
	if dup != wantDup {
		t.Fatalf("enqueue %s: dup=%v, want %v", r.MessageID, dup, wantDup)
	}
}

func pendingIDs(t *testing.T, h *harness) []string {
	t.Helper()
	recs, err := h.db.Queue().Pending(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range recs {
		if r.State != QueueQueued {
			t.Fatalf("Pending returned %s in state %s", r.MessageID, r.State)
		}
		ids = append(ids, r.ScopeID+"/"+r.MessageID)
	}
	return ids
}

// outcome enqueues r and checks what EnqueueResult found.
func outcome(t *testing.T, h *harness, r QueueRecord, want EnqueueOutcome) {
	t.Helper()
	got, err := h.db.Queue().EnqueueResult(t.Context(), r)
	if err != nil || got != want {
		t.Fatalf("enqueue %s/%s: %v (%v), want %v", r.ScopeID, r.MessageID, got, err, want)
	}
}

func testQueueEnqueueDedup(t *testing.T, h *harness) {
	ctx := t.Context()
	q := h.db.Queue()
	mustEnqueue(t, h, qrec("s1", "m1"), false)
	mustEnqueue(t, h, qrec("s1", "m1"), true)       // queued
	outcome(t, h, qrec("s1", "m1"), AlreadyPending) // it must still run
	mustEnqueue(t, h, qrec("s2", "m1"), false)      // same id, other scope
	if err := q.Lease(ctx, "s1", "m1", time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	mustEnqueue(t, h, qrec("s1", "m1"), true) // leased
	outcome(t, h, qrec("s1", "m1"), AlreadyPending)
	if err := q.Ack(ctx, "s1", "m1"); err != nil {
		t.Fatal(err)
	}
	mustEnqueue(t, h, qrec("s1", "m1"), true) // processed
	outcome(t, h, qrec("s1", "m1"), AlreadyDone)
	mustEnqueue(t, h, qrec("s1", "m2"), false)
	if err := q.DeadLetter(ctx, "s1", "m2", "poison"); err != nil {
		t.Fatal(err)
	}
	mustEnqueue(t, h, qrec("s1", "m2"), true) // dead-lettered
	outcome(t, h, qrec("s1", "m2"), AlreadyDone)
	outcome(t, h, qrec("s1", "m9"), Enqueued)
	if got := pendingIDs(t, h); len(got) != 2 || got[0] != "s1/m9" || got[1] != "s2/m1" {
		t.Fatalf("Pending = %v, want [s1/m9 s2/m1]", got)
	}
	bad := qrec("s1", "m3")
	bad.Taint = "root"
	for _, r := range []QueueRecord{bad, qrec("", "m"), qrec("s", "")} {
		if _, err := q.Enqueue(ctx, r); !errors.Is(err, ErrInvalid) {
			t.Fatalf("Enqueue(%+v) = %v, want ErrInvalid", r, err)
		}
	}
}

func testQueueLifecycle(t *testing.T, h *harness) {
	ctx := t.Context()
	q := h.db.Queue()
	mustEnqueue(t, h, qrec("s1", "m1"), false)
	until := time.Now().Add(time.Minute).UTC().Truncate(time.Millisecond)
	steps := []struct {
		name    string
		do      func() error
		wantErr error
		state   string
		tries   int
	}{
		{"heartbeat before lease", func() error { return q.Heartbeat(ctx, "s1", "m1", until) }, ErrNotLeased, QueueQueued, 0},
		{"lease", func() error { return q.Lease(ctx, "s1", "m1", until) }, nil, QueueLeased, 1},
		{"heartbeat", func() error { return q.Heartbeat(ctx, "s1", "m1", until.Add(time.Minute)) }, nil, QueueLeased, 1},
		{"nack", func() error { return q.Nack(ctx, "s1", "m1", "model timeout") }, nil, QueueQueued, 1},
		{"lease again", func() error { return q.Lease(ctx, "s1", "m1", until) }, nil, QueueLeased, 2},
		{"re-lease after restart", func() error { return q.Lease(ctx, "s1", "m1", until) }, nil, QueueLeased, 3},
		{"lease unknown", func() error { return q.Lease(ctx, "s1", "nope", until) }, ErrNotFound, QueueLeased, 3},
	}
	for _, st := range steps {
		if err := st.do(); !errors.Is(err, st.wantErr) {
			t.Fatalf("%s: err %v, want %v", st.name, err, st.wantErr)
		}
		r := rawQueueRecord(t, h, "s1", "m1")
		if r.State != st.state || r.Attempts != st.tries {
			t.Fatalf("%s: state %s attempts %d, want %s %d", st.name, r.State, r.Attempts, st.state, st.tries)
		}
	}
	if r := rawQueueRecord(t, h, "s1", "m1"); r.LastError != "model timeout" || !r.LeaseUntil.Equal(until) {
		t.Fatalf("record = %+v", r)
	}
	// Pending hands leased records back as queued.
	if got := pendingIDs(t, h); len(got) != 1 || got[0] != "s1/m1" {
		t.Fatalf("Pending = %v", got)
	}
	if err := q.DeadLetter(ctx, "s1", "m1", "gave up"); err != nil {
		t.Fatal(err)
	}
	dls, err := q.DeadLetters(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if len(dls) != 1 || dls[0].Reason != "gave up" || dls[0].Record.MessageID != "m1" || dls[0].Record.Attempts != 3 {
		t.Fatalf("DeadLetters = %+v", dls)
	}
	if got := pendingIDs(t, h); len(got) != 0 {
		t.Fatalf("Pending after dead letter = %v", got)
	}
	for name, err := range map[string]error{
		"ack dead letter":   q.Ack(ctx, "s1", "m1"),
		"nack dead letter":  q.Nack(ctx, "s1", "m1", ""),
		"ack unknown":       q.Ack(ctx, "s1", "m9"),
		"dead-letter twice": q.DeadLetter(ctx, "s1", "m1", "again"),
	} {
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("%s = %v, want ErrNotFound", name, err)
		}
	}
	mustEnqueue(t, h, qrec("s1", "m2"), false)
	for i := range 2 { // the second ack is a no-op
		if err := q.Ack(ctx, "s1", "m2"); err != nil {
			t.Fatalf("ack %d: %v", i, err)
		}
	}
}

func rawQueueRecord(t *testing.T, h *harness, scope, id string) QueueRecord {
	t.Helper()
	var r QueueRecord
	err := h.db.bdb.View(func(txn *badger.Txn) error {
		seq, err := locate(txn, scope, id)
		if err != nil {
			return err
		}
		return getValue(txn, keySeq(pfxQueue, scope, seq), func(v []byte) error { return decodeJSON(v, &r) })
	})
	if err != nil {
		t.Fatalf("raw queue record %s/%s: %v", scope, id, err)
	}
	return r
}

func testQueuePendingFIFO(t *testing.T, h *harness) {
	// Interleave scopes; each scope's order must be its enqueue order.
	for i := range 12 {
		scope := fmt.Sprintf("s%d", i%3)
		mustEnqueue(t, h, qrec(scope, fmt.Sprintf("z%02d", 20-i)), false) // ids sort opposite to order
	}
	if err := h.db.Queue().Lease(t.Context(), "s1", "z19", time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	got := pendingIDs(t, h)
	want := []string{
		"s0/z20", "s0/z17", "s0/z14", "s0/z11",
		"s1/z19", "s1/z16", "s1/z13", "s1/z10",
		"s2/z18", "s2/z15", "s2/z12", "s2/z09",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("Pending = %v\nwant      %v", got, want)
	}
}

func testQueueConcurrentEnqueue(t *testing.T, h *harness) {
	const n = 16
	var fresh atomic.Int32
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dup, err := h.db.Queue().Enqueue(t.Context(), qrec("s1", "same"))
			if err != nil {
				errs <- err
				return
			}
			if !dup {
				fresh.Add(1)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if fresh.Load() != 1 {
		t.Fatalf("%d enqueues were accepted, want 1", fresh.Load())
	}
	if got := pendingIDs(t, h); len(got) != 1 {
		t.Fatalf("Pending = %v", got)
	}
}

func testQueueProcessed(t *testing.T, h *harness) {
	ctx := t.Context()
	q := h.db.Queue()
	ok, err := q.HasProcessed(ctx, "proxy", "m1")
	if err != nil || ok {
		t.Fatalf("HasProcessed before = %v, %v", ok, err)
	}
	if err := q.MarkProcessed(ctx, "proxy", "m1"); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		consumer, id string
		want         bool
	}{{"proxy", "m1", true}, {"planner", "m1", false}, {"proxy", "m2", false}} {
		ok, err := q.HasProcessed(ctx, tt.consumer, tt.id)
		if err != nil || ok != tt.want {
			t.Fatalf("HasProcessed(%s, %s) = %v, %v; want %v", tt.consumer, tt.id, ok, err, tt.want)
		}
	}
	// The marker expires after ProcessedTTL.
	err = h.db.bdb.View(func(txn *badger.Txn) error {
		item, err := txn.Get(key2(pfxProcessed, "proxy", "m1"))
		if err != nil {
			return err
		}
		exp := time.Unix(int64(item.ExpiresAt()), 0)
		if d := time.Until(exp); d < DefaultProcessedTTL-time.Minute || d > DefaultProcessedTTL+time.Minute {
			t.Errorf("processed marker expires in %s, want about %s", d, DefaultProcessedTTL)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
