package actors

// recentAnswered remembers the message ids of the last turns a scope
// committed, so that a resend of one (a client that reconnected before it
// saw the ack) is acknowledged at once instead of starting a turn whose
// model call is thrown away when its journal write reports the duplicate.
// The store stays the authority: an id that fell out of the ring is still
// found as a duplicate there.
type recentAnswered struct {
	ids  [64]string
	next int
}

func (r *recentAnswered) add(id string) {
	r.ids[r.next] = id
	r.next = (r.next + 1) % len(r.ids)
}

func (r *recentAnswered) has(id string) bool {
	if id == "" {
		return false
	}
	for _, v := range r.ids {
		if v == id {
			return true
		}
	}
	return false
}
