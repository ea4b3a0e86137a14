package telegram

import "time"

// Clock is the time source for pacing, backoff, the typing indicator and
// expiry checks. Production code passes nil and gets the system clock;
// tests pass a fake one, so that nothing in the tests waits on wall-clock
// time and no test depends on the machine's speed.
type Clock interface {
	Now() time.Time
	// After returns a channel that receives once d has passed.
	After(d time.Duration) <-chan time.Time
}

type systemClock struct{}

func (systemClock) Now() time.Time                         { return time.Now() }
func (systemClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

func clockOr(c Clock) Clock {
	if c == nil {
		return systemClock{}
	}
	return c
}
