package actors

import (
	"slices"
	"sync"

	"github.com/asynkron/protoactor-go/actor"
)

// executorPool bounds the tasks of projects that run at the same time
// (spec 19.7): limits.max_parallel_executors_per_scope in one scope and
// limits.max_parallel_executors across all of them. Each running task has
// one executor and one sandbox at a time, so a slot is one task.
//
// A Project takes a slot before it starts a task and gives it back when
// the task's actor has terminated. A Project refused a slot is put on the
// waiting list, and every release sends each waiting Project an
// executorSlotFreed, after which it tries again; so no actor ever blocks
// on the pool. Like admission, it is shared by every scope; its critical
// sections are a few integer operations.
type executorPool struct {
	global   int
	perScope int
	// wake tells a waiting Project that a slot may be free; it is called
	// outside the lock.
	wake func(*actor.PID)

	mu      sync.Mutex
	total   int
	scopes  map[string]int
	waiting []*actor.PID
}

// executorSlotFreed says a slot of the executor pool was given back.
// Sender: the executorPool, for a Project that waited. Receiver: the Project.
type executorSlotFreed struct{}

func newExecutorPool(global, perScope int, wake func(*actor.PID)) *executorPool {
	return &executorPool{global: global, perScope: perScope, wake: wake, scopes: make(map[string]int)}
}

// acquire takes a slot for a task of scope. When none is free it returns
// false and who is woken at the next release.
func (p *executorPool) acquire(scope string, who *actor.PID) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.total < p.global && p.scopes[scope] < p.perScope {
		p.total++
		p.scopes[scope]++
		return true
	}
	if !slices.ContainsFunc(p.waiting, who.Equal) {
		p.waiting = append(p.waiting, who)
	}
	return false
}

// release gives back a slot of scope taken by acquire and wakes every
// waiting Project: which of them can use the slot depends on its scope.
func (p *executorPool) release(scope string) {
	p.mu.Lock()
	if p.scopes[scope] > 0 {
		p.total--
		if p.scopes[scope]--; p.scopes[scope] == 0 {
			delete(p.scopes, scope)
		}
	}
	waiting := p.waiting
	p.waiting = nil
	p.mu.Unlock()
	for _, w := range waiting {
		p.wake(w)
	}
}

// forget drops who from the waiting list: it no longer starts tasks.
func (p *executorPool) forget(who *actor.PID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.waiting = slices.DeleteFunc(p.waiting, who.Equal)
}

// inUse reports the slots held in scope and in all scopes.
func (p *executorPool) inUse(scope string) (inScope, total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.scopes[scope], p.total
}
