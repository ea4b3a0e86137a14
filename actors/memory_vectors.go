package actors

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/scheduler"

	"github.com/silas-ai/silas/persistence"
	"github.com/silas-ai/silas/runtime/embed"
)

// VectorWriter embeds memories off the turns (spec 6.2). Storing a memory
// marks it pending in the same transaction (persistence.Memory.Put); this
// actor embeds what is pending in batches and stores the vectors, which the
// vector index then answers. A turn never waits for it: the item is
// committed and found by keyword at once, by meaning as soon as its vector
// follows. Scopes nudge it after a commit or memory operation that stored
// an embeddable item; it also sweeps on a timer, for memories written by
// other paths (consolidation, imports, a restart with marks left over).
//
// At its first run after a start it makes the stored vectors the current
// model's (persistence.Memory.SyncVectorModel: a changed
// silas.memory.embedding_model embeds everything again) and only then lets
// the index answer.
//
// When the provider fails, the marks stay, a warning is logged and the run
// is tried again after a backoff (30 s doubling to 10 minutes); meanwhile
// memory search works by keywords. A text the provider refuses outright
// (HTTP 4xx) loses its mark after it is tried alone, and is logged: it
// stays keyword-searchable.
//
// Supervision: its state is the marks in Badger; a restart runs again.
type VectorWriter struct {
	d        *shared
	running  bool
	again    bool
	synced   bool
	failures int
	retry    scheduler.CancelFunc
	sweep    scheduler.CancelFunc
}

// vectorsPending asks for a run. Sender: scopes, the timers. Receiver: the
// VectorWriter.
type vectorsPending struct{}

// vectorsWritten reports a finished run. Sender: the run's goroutine.
// Receiver: the VectorWriter.
type vectorsWritten struct {
	stored int
	synced bool
	more   bool
	err    error
}

// Vector writer tuning.
const (
	vectorBatch        = 64
	vectorRunBatches   = 64 // batches per run before yielding to the mailbox
	vectorSweepEvery   = 5 * time.Minute
	vectorRetryInitial = 30 * time.Second
	vectorRetryMax     = 10 * time.Minute
	vectorEmbedTimeout = 2 * time.Minute
)

func newVectorWriter(d *shared) *VectorWriter { return &VectorWriter{d: d} }

// Receive handles runs and their results.
func (w *VectorWriter) Receive(c actor.Context) {
	switch m := c.Message().(type) {
	case *actor.Started:
		w.sweep = scheduler.NewTimerScheduler(c).SendRepeatedly(vectorSweepEvery, vectorSweepEvery, c.Self(), &vectorsPending{})
		w.start(c)
	case *vectorsPending:
		if w.running {
			w.again = true
			return
		}
		if w.retry != nil {
			return // backing off after a failure; the retry timer runs it
		}
		w.start(c)
	case *vectorRetry:
		w.retry = nil
		if !w.running {
			w.start(c)
		}
	case *vectorsWritten:
		w.onWritten(c, m)
	case *actor.Stopping, *actor.Restarting:
		for _, cancel := range []scheduler.CancelFunc{w.sweep, w.retry} {
			if cancel != nil {
				cancel()
			}
		}
	}
}

// vectorRetry ends a backoff. Sender: the retry timer. Receiver: the
// VectorWriter.
type vectorRetry struct{}

func (w *VectorWriter) start(c actor.Context) {
	w.running, w.again = true, false
	self, root, d, synced := c.Self(), w.d.sys.Root, w.d, w.synced
	reply := func(m *vectorsWritten) { root.Send(self, m) }
	if !w.d.tasks.Go("memory vectors", func(ctx context.Context) {
		reply(writeVectors(ctx, d, synced))
	}, func(err error) { reply(&vectorsWritten{synced: synced, err: err}) }) {
		w.running = false
	}
}

func (w *VectorWriter) onWritten(c actor.Context, m *vectorsWritten) {
	w.running = false
	w.synced = w.synced || m.synced
	if m.err != nil {
		if errors.Is(m.err, context.Canceled) {
			return // shutting down
		}
		w.failures++
		wait := min(vectorRetryInitial<<min(w.failures-1, 10), vectorRetryMax)
		ev := w.d.Log.Warn()
		if errors.Is(m.err, embed.ErrUnavailable) {
			ev = w.d.Log.Debug()
		}
		ev.Err(m.err).Dur("retry_in", wait).Int("stored", m.stored).
			Msg("embedding memories failed; new memories are found by keyword until the embedding provider answers")
		w.retry = scheduler.NewTimerScheduler(c).SendOnce(wait, c.Self(), &vectorRetry{})
		return
	}
	w.failures = 0
	if m.more || w.again {
		w.start(c)
	}
}

// writeVectors is one run: the model check when not yet synced, then up to
// vectorRunBatches batches of pending items. more reports that marks may be
// left.
func writeVectors(ctx context.Context, d *shared, synced bool) *vectorsWritten {
	res := &vectorsWritten{synced: synced}
	mem := d.DB.Memory()
	if !synced {
		reset, err := mem.SyncVectorModel(ctx, d.Embedder.Model())
		if err != nil {
			res.err = err
			return res
		}
		if reset {
			d.Log.Info().Str("model", d.Embedder.Model()).Msg("memory embeddings are made anew with this model; semantic search finds memories as they are embedded")
		}
		d.vectors.SetReady()
		res.synced = true
	}
	for range vectorRunBatches {
		pend, err := mem.PendingVectors(ctx, vectorBatch)
		if err != nil || len(pend) == 0 {
			res.err = err
			return res
		}
		n, err := embedBatch(ctx, d, pend)
		res.stored += n
		if err != nil {
			res.err = err
			return res
		}
	}
	res.more = true
	return res
}

// embedBatch embeds and stores one batch. When the provider refuses the
// batch as a bad request, each text is tried alone and the ones it refuses
// lose their mark.
func embedBatch(ctx context.Context, d *shared, pend []persistence.PendingVector) (int, error) {
	vs := make([]persistence.Vector, len(pend))
	var texts []string
	var at []int
	for i, p := range pend {
		vs[i] = persistence.Vector{Scope: p.Scope, MemoryID: p.MemoryID, Text: p.Text}
		if !p.Gone {
			texts = append(texts, p.Text)
			at = append(at, i)
		}
	}
	if len(texts) > 0 {
		ectx, cancel := context.WithTimeout(ctx, vectorEmbedTimeout)
		vecs, err := d.Embedder.Embed(ectx, texts)
		cancel()
		switch {
		case err == nil && len(vecs) != len(texts):
			return 0, fmt.Errorf("embed: %d vectors for %d texts: %w", len(vecs), len(texts), embed.ErrInvalidResponse)
		case err == nil:
			for j, i := range at {
				vs[i].Values = vecs[j]
			}
		case embed.Retryable(err) || errors.Is(err, embed.ErrMissingAPIKey) || errors.Is(err, embed.ErrInvalidResponse):
			return 0, err
		default:
			// Refused as a bad request: find the texts it refuses.
			for _, i := range at {
				ectx, cancel := context.WithTimeout(ctx, vectorEmbedTimeout)
				one, err := d.Embedder.Embed(ectx, []string{vs[i].Text})
				cancel()
				switch {
				case err == nil && len(one) == 1:
					vs[i].Values = one[0]
				case err == nil || embed.Retryable(err):
					return 0, err
				default:
					d.Log.Warn().Err(err).Str("scope", vs[i].Scope).Str("memory_id", vs[i].MemoryID).
						Msg("the embedding provider refuses this memory; it is found by keyword only")
				}
			}
		}
	}
	stored, err := d.DB.Memory().PutVectors(ctx, vs)
	if err != nil {
		return 0, err
	}
	d.vectors.Add(ctx, stored)
	return len(stored), nil
}

// vectorsChanged nudges the vector writer; it is safe from any goroutine
// and does nothing when semantic memory is off.
func (s *shared) vectorsChanged() {
	if s.vectorWriter != nil {
		s.sys.Root.Send(s.vectorWriter, &vectorsPending{})
	}
}

// zone is the owner's time zone (scheduler.timezone), in which a memory
// query's "yesterday" or "on Monday" is read.
func (s *shared) zone() *time.Location {
	if s.loc != nil {
		return s.loc
	}
	return time.UTC
}

// startMemory loads the owner's time zone and, when an embedder is
// configured, creates the vector index and spawns its writer.
func startMemory(sh *shared) error {
	sh.loc = time.UTC
	if loc, err := time.LoadLocation(sh.Config.Scheduler.Timezone); err == nil {
		sh.loc = loc // config validation refuses a zone that does not load
	}
	if sh.Embedder == nil {
		return nil
	}
	sh.vectors = persistence.NewVectorIndex(sh.DB, persistence.VectorIndexOptions{})
	props := actor.PropsFromProducer(func() actor.Actor { return newVectorWriter(sh) }, sh.props...)
	pid, err := sh.sys.Root.SpawnNamed(props, "memory-vectors")
	if err != nil {
		return fmt.Errorf("spawn memory vector writer: %w", err)
	}
	sh.vectorWriter = pid
	return nil
}
