package ownerapi

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/persistence"
)

// Activity feed paging.
const (
	defaultActivityLimit = 50
	maxActivityLimit     = 200
	// activityChunk is how many audit entries one read takes, walking back.
	activityChunk = 256
	// maxActivityScan bounds the audit entries one request reads: most of
	// the log (tool calls, context evictions, metrics) is not activity, and
	// a page must not cost a walk of the whole log. A page that hits the
	// bound is shorter than limit and still carries next_before.
	maxActivityScan = 4096
)

// ActivityEntry is one line of the owner's timeline.
type ActivityEntry struct {
	Seq        uint64    `json:"seq"`
	Time       time.Time `json:"time"`
	Event      string    `json:"event"`
	Kind       string    `json:"kind"`
	Title      string    `json:"title"`
	Detail     string    `json:"detail,omitempty"`
	Scope      string    `json:"scope,omitempty"`
	WorkItemID string    `json:"work_item_id,omitempty"`
	Taint      string    `json:"taint,omitempty"`
}

// ActivityPage answers GET /activity: entries newest first, the cursor of
// the next (older) page, and when the owner last looked.
type ActivityPage struct {
	Entries    []ActivityEntry `json:"entries"`
	NextBefore *uint64         `json:"next_before"`
	LastVisit  *time.Time      `json:"last_visit"`
}

// VisitResponse answers POST /activity/visit.
type VisitResponse struct {
	PreviousVisit *time.Time `json:"previous_visit"`
	VisitedAt     time.Time  `json:"visited_at"`
}

// activityRoutes serve the Activity surface (spec 8.2): plain-language
// entries derived from the audit log, newest first.
func (a *API) activityRoutes() map[string]fasthttp.RequestHandler {
	return map[string]fasthttp.RequestHandler{
		"GET /activity":        a.listActivity,
		"POST /activity/visit": a.recordVisit,
	}
}

// activityQuery is a parsed GET /activity query.
type activityQuery struct {
	before   uint64 // 0: from the newest
	limit    int
	since    time.Time
	allScope bool
}

func parseActivityQuery(args *fasthttp.Args) (activityQuery, error) {
	q := activityQuery{limit: defaultActivityLimit}
	if v := args.Peek("before"); len(v) > 0 {
		n, err := strconv.ParseUint(string(v), 10, 64)
		if err != nil || n == 0 {
			return q, fmt.Errorf("before must be a positive entry number (the next_before of the previous page), got %q", v)
		}
		q.before = n
	}
	if v := args.Peek("limit"); len(v) > 0 {
		n, err := strconv.Atoi(string(v))
		if err != nil || n < 1 || n > maxActivityLimit {
			return q, fmt.Errorf("limit must be 1 to %d, got %q", maxActivityLimit, v)
		}
		q.limit = n
	}
	if v := args.Peek("since"); len(v) > 0 {
		t, err := time.Parse(time.RFC3339Nano, string(v))
		if err != nil {
			return q, fmt.Errorf("since must be RFC 3339 like 2026-01-02T03:04:05Z, got %q", v)
		}
		q.since = t
	}
	switch s := string(args.Peek("scope")); s {
	case "", "owner":
	case "all":
		q.allScope = true
	default:
		return q, fmt.Errorf("scope must be owner or all, got %q", s)
	}
	return q, nil
}

func (a *API) listActivity(ctx *fasthttp.RequestCtx) {
	if string(ctx.Path()) != "/activity" {
		WriteError(ctx, fasthttp.StatusNotFound, messages.CodeNotFound, "no such endpoint")
		return
	}
	q, err := parseActivityQuery(ctx.QueryArgs())
	if err != nil {
		WriteError(ctx, fasthttp.StatusBadRequest, messages.CodeBadRequest, err.Error())
		return
	}
	c, cancel := reqContext()
	defer cancel()
	page, err := a.activityPage(c, q)
	if err != nil {
		WriteError(ctx, fasthttp.StatusInternalServerError, messages.CodeInternal, err.Error())
		return
	}
	last, err := a.d.DB.OwnerVisits().Last(c)
	if err != nil {
		WriteError(ctx, fasthttp.StatusInternalServerError, messages.CodeInternal, err.Error())
		return
	}
	if !last.IsZero() {
		page.LastVisit = &last
	}
	WriteJSON(ctx, fasthttp.StatusOK, page)
}

// activityPage walks the audit log back from q.before and describes what
// the owner would want to read.
func (a *API) activityPage(ctx context.Context, q activityQuery) (ActivityPage, error) {
	page := ActivityPage{Entries: []ActivityEntry{}}
	head, _, err := a.d.DB.Audit().Head(ctx)
	if err != nil {
		return page, err
	}
	cursor := head + 1 // entries below cursor are still to read
	if q.before != 0 && q.before < cursor {
		cursor = q.before
	}
	for scanned := 0; cursor > 1; {
		if scanned >= maxActivityScan {
			next := cursor
			page.NextBefore = &next
			return page, nil
		}
		from := uint64(1)
		if cursor > activityChunk {
			from = cursor - activityChunk
		}
		entries, err := a.d.DB.Audit().Range(ctx, from, int(cursor-from))
		if err != nil {
			return page, err
		}
		for i := len(entries) - 1; i >= 0; i-- {
			e := entries[i]
			scanned++
			if !q.since.IsZero() && e.Time.Before(q.since) {
				return page, nil
			}
			if !q.allScope && e.Scope != "" && e.Scope != a.d.OwnerID {
				continue
			}
			item, ok := describe(e)
			if !ok {
				continue
			}
			page.Entries = append(page.Entries, item)
			if len(page.Entries) == q.limit {
				if e.Seq > 1 {
					next := e.Seq
					page.NextBefore = &next
				}
				return page, nil
			}
		}
		cursor = from
	}
	return page, nil
}

func (a *API) recordVisit(ctx *fasthttp.RequestCtx) {
	if string(ctx.Path()) != "/activity/visit" {
		WriteError(ctx, fasthttp.StatusNotFound, messages.CodeNotFound, "no such endpoint")
		return
	}
	var empty struct{}
	if err := decodeOwnerBody(ctx, &empty, 64, true); err != nil {
		WriteError(ctx, fasthttp.StatusBadRequest, messages.CodeBadRequest, "send no body or {}")
		return
	}
	c, cancel := reqContext()
	defer cancel()
	now := time.Now().UTC()
	prev, err := a.d.DB.OwnerVisits().Record(c, now)
	if err != nil {
		WriteError(ctx, fasthttp.StatusInternalServerError, messages.CodeInternal, err.Error())
		return
	}
	resp := VisitResponse{VisitedAt: now}
	if !prev.IsZero() {
		resp.PreviousVisit = &prev
	}
	WriteJSON(ctx, fasthttp.StatusOK, resp)
}

// activityData is the subset of audit data fields the feed reads.
type activityData struct {
	WorkItemID string `json:"work_item_id"`
	Title      string `json:"title"`
	Taint      string `json:"taint"`
	Route      string `json:"route"`
	Blocked    bool   `json:"blocked"`
	Reason     string `json:"reason"`
	Gate       string `json:"gate"`
	Attempt    int    `json:"attempt"`
	Attempts   int    `json:"attempts"`
	Checks     int    `json:"checks"`
	Failed     string `json:"failed"`
	Stage      string `json:"stage"`
	RefID      string `json:"ref_id"`
	DeviceID   string `json:"device_id"`
	Name       string `json:"name"`
	Error      string `json:"error"`
}

// describe turns an audit entry into a timeline entry, or reports that the
// entry is not activity (internal bookkeeping, metrics).
func describe(e persistence.AuditEntry) (ActivityEntry, bool) {
	var d activityData
	if len(e.Data) > 0 {
		// Unknown shapes just leave fields empty: the title still reads.
		_ = json.Unmarshal(e.Data, &d)
	}
	out := ActivityEntry{Seq: e.Seq, Time: e.Time, Event: e.Event, Scope: e.Scope, WorkItemID: d.WorkItemID, Taint: d.Taint}
	set := func(kind, title, detail string) (ActivityEntry, bool) {
		out.Kind, out.Title, out.Detail = kind, title, detail
		return out, true
	}
	switch e.Event {
	case "turn_completed":
		switch {
		case d.Blocked:
			return set("turn", "Held back a reply: a policy gate blocked it", "")
		case d.Route == "planner":
			return set("turn", "Worked through a request with the planner", "")
		}
		return set("turn", "Answered a message", "")
	case "turn_failed":
		return set("turn", "Could not finish a reply", stageDetail(d.Stage))
	case "plan_proposed":
		return set("plan", "Proposed a plan"+titled(d.Title), "")
	case "plan_refused", "plan_invalid":
		return set("plan", "Dropped a plan that did not pass checks", d.Reason)
	case "approval_requested":
		return set("approval", "Asked for your approval of a plan", "")
	case "approval_granted":
		return set("approval", "You approved a plan", "")
	case "approval_declined":
		switch d.Reason {
		case "timeout":
			return set("approval", "A plan approval timed out, so the plan did not run", "")
		case "no_owner_connection":
			return set("approval", "A plan waited for approval while you were offline, so it did not run", "")
		case "", "declined":
			return set("approval", "You declined a plan", "")
		}
		return set("approval", "A plan was declined", d.Reason)
	case "approval_failed":
		return set("approval", "Could not record an approval", "")
	case "execution_started":
		return set("execution", fmt.Sprintf("Started working on a task (attempt %d)", max(d.Attempt, 1)), "")
	case "execution_blocked_no_approval":
		return set("execution", "Refused to run a task whose approval could not be verified", d.Reason)
	case "attempt_failed":
		return set("execution", fmt.Sprintf("Attempt %d of a task failed", max(d.Attempt, 1)), "")
	case "work_item_done":
		return set("execution", "Finished a task", "")
	case "work_item_failed":
		return set("execution", fmt.Sprintf("Gave up on a task after %d attempts", d.Attempts), "")
	case "work_item_blocked":
		return set("execution", fmt.Sprintf("Stopped a task at attempt %d: a gate or check blocked it", max(d.Attempt, 1)), d.Reason)
	case "work_item_replanned":
		return set("execution", "Replaced a task with the re-plan you approved", "")
	case "work_item_escalated":
		return set("execution", "Gave up on a task and needs you to decide what next", d.Reason)
	case "work_item_resumed", "work_item_recovered":
		return set("execution", "Resumed a task after a restart", "")
	case "verification_passed":
		return set("verification", "Checked the result: verification passed", checksDetail(d.Checks))
	case "verification_failed":
		return set("verification", "Checked the result: verification failed", d.Failed)
	case "gate_block":
		return set("gate", "A policy gate blocked something"+named(d.Gate), d.Reason)
	case "gate_approval_required":
		return set("gate", "A policy gate asked for approval"+named(d.Gate), d.Reason)
	case "gate_escalation":
		return set("gate", "Escalated repeated gate blocks"+named(d.Gate), d.Reason)
	case "persona_changed", "persona_preset", "persona_feedback", "persona_tune", "persona_baseline_changed":
		return set("persona", "Adjusted how I talk", "")
	case "secret_stored":
		return set("secret", "You stored a secret for a connection", "ref "+d.RefID)
	case "device_code_created":
		return set("device", "You asked for a device enrolment code", d.Name)
	case "device_enrolled":
		return set("device", "A device was added"+quoted(d.Name), "id "+d.DeviceID)
	case "device_revoked":
		return set("device", "A device was revoked"+quoted(d.Name), "id "+d.DeviceID)
	case "approval_refused":
		return set("security", "Refused an approval that lacked its confirmation (the slide or your security key); nothing ran", d.Reason)
	case "approval_confirmed":
		return set("approval", "Your security key confirmed an approval", "")
	case "webauthn_registered":
		return set("device", "A security key was registered"+quoted(d.Name), "")
	case "webauthn_removed":
		return set("device", "A security key was removed"+quoted(d.Name), "")
	case "webauthn_registration_refused":
		return set("security", "Refused a security key registration that did not verify", d.Error)
	case "replay_attempt":
		return set("security", "Refused a replayed signed message", d.Reason)
	case "signature_invalid":
		return set("security", "A message's signature did not verify, so it was not treated as yours", d.Reason)
	case "stream_started":
		return set("system", "Silas started", "")
	}
	return out, false
}

func titled(t string) string {
	if t == "" {
		return ""
	}
	return ": " + t
}

func named(gate string) string {
	if gate == "" {
		return ""
	}
	return " (" + gate + ")"
}

func quoted(name string) string {
	if name == "" {
		return ""
	}
	return ": " + strconv.Quote(name)
}

func checksDetail(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d %s", n, plural(n, "check", "checks"))
}

func stageDetail(stage string) string {
	if stage == "" {
		return ""
	}
	return "stopped at " + stage
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
