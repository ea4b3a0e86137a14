package cli

import (
	"fmt"
	"strings"

	"github.com/silas-ai/silas/messages"
)

// Work-item progress (spec 8.1 `work_item_status`, statuses of spec
// 19.2.1) prints one line per change: the work item, its status and
// attempt, and a shortened detail; the final status says "finished".

const (
	// maxStatusDetailRunes bounds the detail shown on a status line.
	maxStatusDetailRunes = 160
	// maxTrackedWork bounds the work items whose title and last line the
	// session remembers; beyond it, it forgets them all and starts over.
	maxTrackedWork = 256
)

// workLog is what the session remembers of the work items it reports on.
type workLog struct {
	titles map[string]string // work item id → the title of its approval
	last   map[string]string // work item id → the last line printed
}

// named records the title of the work item an approval request creates.
func (w *workLog) named(id, title string) {
	if id == "" || title == "" {
		return
	}
	if w.titles == nil || len(w.titles) >= maxTrackedWork {
		w.titles = make(map[string]string)
	}
	w.titles[id] = title
}

// line returns the status line of ev, or "" when it says nothing new.
func (w *workLog) line(ev *messages.WorkItemStatusEvent) string {
	final := messages.WorkItemStatus(ev.Status).Final()
	var b strings.Builder
	fmt.Fprintf(&b, "work item %s", printable(ev.WorkItemID))
	if t := w.titles[ev.WorkItemID]; t != "" {
		fmt.Fprintf(&b, " (%s)", shorten(t, 60))
	}
	if final {
		b.WriteString(" finished")
	}
	fmt.Fprintf(&b, ": %s", printable(ev.Status))
	if ev.Attempt > 0 {
		fmt.Fprintf(&b, ", attempt %d", ev.Attempt)
	}
	if d := strings.Join(strings.Fields(ev.Detail), " "); d != "" {
		fmt.Fprintf(&b, ": %s", shorten(d, maxStatusDetailRunes))
	}
	l := b.String()
	if w.last[ev.WorkItemID] == l {
		return ""
	}
	if w.last == nil || len(w.last) >= maxTrackedWork {
		w.last = make(map[string]string)
	}
	w.last[ev.WorkItemID] = l
	return l
}
