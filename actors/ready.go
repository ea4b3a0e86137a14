package actors

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// aliveTimeout bounds one actor's answer to Alive when ctx has no deadline.
const aliveTimeout = 2 * time.Second

// Alive reports whether the actors every message passes through answer:
// the Stream (which routes messages to scopes) and the Audit writer. Each
// is sent protoactor's Touch, which its mailbox answers in order with the
// messages before it, so a stuck or stopped actor shows as an error. It is
// for readiness checks; call it from outside the actors, never in Receive.
func (s *System) Alive(ctx context.Context) error {
	timeout := aliveTimeout
	if dl, ok := ctx.Deadline(); ok {
		timeout = time.Until(dl)
	}
	if timeout <= 0 {
		return context.DeadlineExceeded
	}
	var errs []error
	for _, a := range []struct {
		name string
		pid  *actor.PID
	}{{"stream", s.d.stream}, {"audit", s.d.audit}} {
		res, err := s.d.sys.Root.RequestFuture(a.pid, &actor.Touch{}, timeout).Result()
		if err == nil {
			if _, ok := res.(*actor.Touched); !ok {
				err = fmt.Errorf("answered %T", res)
			}
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("the %s actor does not answer: %w", a.name, err))
		}
	}
	return errors.Join(errs...)
}
