package proc

import (
	"fmt"
	"sync"

	"github.com/silas-ai/silas/sandbox"
)

// IDPool hands out unprivileged host ids (each used as a uid and a gid) from
// [base, base+count), one per sandbox instance, when Silas runs as root. A
// sandbox running under its own id is not host root, so RLIMIT_NPROC holds
// for it, host files owned by root stay closed to it, and two instances
// never share an id.
type IDPool struct {
	base, count int

	mu   sync.Mutex
	used map[int]bool
	next int
}

// NewIDPool returns a pool of count ids from base. The ids must be unused on
// the host (no user, no file owner).
func NewIDPool(base, count int) (*IDPool, error) {
	if base < 1000 || count < 1 || base+count-1 > 1<<31-2 {
		return nil, fmt.Errorf("%w: sandbox ids %d+%d: want a base of at least 1000, a positive count, and ids below 2^31-1",
			sandbox.ErrInvalidConfig, base, count)
	}
	return &IDPool{base: base, count: count, used: map[int]bool{}}, nil
}

// Acquire returns a free id, going round the range so a released id is the
// last one handed out again.
func (p *IDPool) Acquire() (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for range p.count {
		id := p.base + p.next
		p.next = (p.next + 1) % p.count
		if !p.used[id] {
			p.used[id] = true
			return id, nil
		}
	}
	return 0, fmt.Errorf("%w: all %d sandbox ids from %d are in use; destroy instances or widen the range",
		sandbox.ErrBackendUnavailable, p.count, p.base)
}

// Release returns id to the pool.
func (p *IDPool) Release(id int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.used, id)
}
