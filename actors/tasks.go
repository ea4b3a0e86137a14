package actors

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"

	"github.com/rs/zerolog"
)

// tasks tracks the goroutines actors start for IO, so that shutdown can wait
// for them and a panic in one is logged instead of killing the process.
type tasks struct {
	mu     sync.Mutex
	closed bool
	wg     sync.WaitGroup
	ctx    context.Context
	cancel context.CancelFunc
	log    zerolog.Logger
	run    *workers
}

func newTasks(log zerolog.Logger) *tasks {
	ctx, cancel := context.WithCancel(context.Background())
	return &tasks{ctx: ctx, cancel: cancel, log: log, run: newWorkers(0)}
}

// Go runs fn on a worker (workers.go) unless shutdown has begun; it reports whether fn
// was started. A panic in fn is logged with its stack and returned to onPanic.
func (t *tasks) Go(name string, fn func(ctx context.Context), onPanic func(err error)) bool {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return false
	}
	t.wg.Add(1)
	t.mu.Unlock()
	t.run.Schedule(func() {
		defer t.wg.Done()
		defer func() {
			if v := recover(); v != nil {
				stack := debug.Stack()
				t.log.Error().Str("task", name).Interface("panic", v).Bytes("stack", stack).Msg("task panicked")
				if onPanic != nil {
					onPanic(fmt.Errorf("panic in %s: %v", name, v))
				}
			}
		}()
		fn(t.ctx)
	})
	return true
}

// Close refuses new tasks, cancels running ones and waits for them.
func (t *tasks) Close() {
	t.mu.Lock()
	t.closed = true
	t.mu.Unlock()
	t.cancel()
	t.wg.Wait()
	t.run.Stop()
}
