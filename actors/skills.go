package actors

import (
	"context"
	"errors"
	"io/fs"
	"slices"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/scheduler"

	"github.com/silas-ai/silas/config"
	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/persistence"
	"github.com/silas-ai/silas/sandbox"
	"github.com/silas-ai/silas/skills"
	"github.com/silas-ai/silas/skills/manifest"
)

// Sentinel errors of the skill install flow; match them with errors.Is.
var (
	// ErrSkillInvalid means the skill failed deterministic validation: no
	// card went out. The answer's Report names every problem; fix them and
	// install again.
	ErrSkillInvalid = errors.New("the skill failed validation")
	// ErrSkillBusy means an install of the same skill is already waiting
	// for the owner or running: answer that card first.
	ErrSkillBusy = errors.New("an install of this skill is already in progress")
	// ErrSkillBundled means the request would replace or remove a skill
	// that ships inside the binary: choose another name, or leave it.
	ErrSkillBundled = errors.New("bundled skills ship with Silas and cannot be installed over or removed")
	// ErrSkillUnchanged means exactly these files are installed already:
	// there is nothing to approve.
	ErrSkillUnchanged = errors.New("the skill is already installed with exactly these files")
	// ErrSkillNotInstalled means no installed skill has that name.
	ErrSkillNotInstalled = errors.New("no such skill")
	// ErrSkillsUnavailable means this process cannot install skills (no
	// approval engine): run the daemon (`silas serve`).
	ErrSkillsUnavailable = errors.New("skill installation is not available in this process")
)

// SkillInstallerOptions configure the SkillInstaller (Deps.SkillInstaller).
type SkillInstallerOptions struct {
	// Dir is silas.skills_dir: installed custom skills live in Dir/<name>.
	Dir string
	// StagingDir is where imports are adapted before their card (under the
	// data dir, never inside Dir).
	StagingDir string
	// Bundled are the skills inside the binary (bundled.FS()).
	Bundled fs.FS
	// Sandbox runs the Python syntax check and the dry runs, each in a fresh
	// instance. Nil fails every skill with Python scripts closed (the check
	// cannot run) and refuses dry runs.
	Sandbox sandbox.Manager
	// Validation are silas.skills.validation.
	Validation config.SkillValidation
	// Current returns the snapshot in force (the daemon's Deps.Skills),
	// and Publish makes a new one current after an install or a removal.
	Current func() *skills.Snapshot
	Publish func(*skills.Snapshot)
	// CheckTimeout bounds the syntax check and each dry run; zero is
	// skills.DefaultCheckTimeout.
	CheckTimeout time.Duration
}

// Origins of an install request (messages.SkillCard.Origin).
const (
	SkillOriginLocal    = "local"
	SkillOriginImported = "imported"
	SkillOriginMaker    = "skill-maker"
)

// InstallSkill asks the SkillInstaller to validate the skill in Dir and,
// when it passes, to put its skill_install card to the owner (spec 10.4).
// With Import, Dir is first adapted into the staging directory (spec
// 10.4.1). Sender: System.InstallSkill (a future) or an actor (the
// skill-maker flow). Reply: *SkillInstallAnswer once the card is out or
// refused; Notify, when set, later gets the *SkillInstallOutcome.
type InstallSkill struct {
	Dir string
	// Origin is SkillOriginLocal (default) or SkillOriginMaker; imports are
	// SkillOriginImported.
	Origin string
	Import bool
	// FormatHint and Name adjust an import (skills.ImportOptions).
	FormatHint skills.Format
	Name       string
	Notify     *actor.PID

	// files are the skill a skill-maker work item staged (Origin
	// SkillOriginMaker, Name its directory name): the installer writes
	// them into its staging directory and validates them there. Only the
	// WorkItem sets them.
	files []manifest.Entry
	// workItem is the id of the work item that staged files.
	workItem string
}

// SkillInstallAnswer answers InstallSkill. With Err nil the card went out
// under RequestID; with ErrSkillInvalid (errors.Is) Report says why.
type SkillInstallAnswer struct {
	RequestID      string
	Name           string
	Hash           string
	ExpiresAt      time.Time
	Report         *skills.ValidationReport
	Transformation *skills.TransformationReport
	Err            error
}

// SkillInstallOutcome says how a request ended (Status is one of the
// messages.SkillInstall* values). Sender: the SkillInstaller. Receiver:
// InstallSkill.Notify.
type SkillInstallOutcome struct {
	RequestID string `json:"request_id"`
	Name      string `json:"name"`
	Hash      string `json:"hash"`
	Status    string `json:"status"`
	Detail    string `json:"detail,omitempty"`
}

// RemoveSkill asks the SkillInstaller to uninstall a skill: its record and
// its files under skills_dir go, and work items using it end blocked.
// Sender: System.RemoveSkill (a future). Reply: *SkillRemoveAnswer.
type RemoveSkill struct{ Name string }

// SkillRemoveAnswer answers RemoveSkill.
type SkillRemoveAnswer struct {
	Name string
	Hash string
	Err  error
}

// skillRequestsQuery asks for the pending cards and the recent outcomes.
// Sender: System (a future). Reply: *skillRequestsReply.
type skillRequestsQuery struct{}

type skillRequestsReply struct {
	pending  []messages.SkillInstallRequestEvent
	outcomes []SkillInstallOutcome
}

// skillCardsFor asks the SkillInstaller to send its pending cards to an
// owner connection that just attached. Sender: the owner Scope.
type skillCardsFor struct{ sink messages.Sink }

// Internal results of the installer's IO goroutines.
type (
	installValidated struct {
		req    *InstallSkill
		from   *actor.PID
		skill  *skills.Skill
		dir    string
		report skills.ValidationReport
		trans  *skills.TransformationReport
		stage  string // staging directory to remove when the request ends
		// restored is the journaled request this validation restores
		// after a restart; nil for a new request.
		restored *persistence.SkillRequest
		err      error
	}
	installJournaled struct {
		id  string
		err error
	}
	// installsRestored carries the journaled requests found at start.
	installsRestored struct{ err error }
	installExpired   struct{ id string }
	installDone      struct {
		id     string
		snap   *skills.Snapshot
		status string
		detail string
	}
	removeDone struct {
		name string
		hash string
		// deleted: the install record is gone (even if err is set).
		deleted bool
		snap    *skills.Snapshot
		from    *actor.PID
		err     error
	}
)

// installRequest is one request whose card is out or whose install runs.
type installRequest struct {
	id     string
	req    *InstallSkill
	from   *actor.PID          // who asked, answered once the card is out
	answer *SkillInstallAnswer // what from gets then
	skill  *skills.Skill
	dir    string
	origin string
	stage  string
	event  *messages.SkillInstallRequestEvent
	cancel scheduler.CancelFunc
	// journaling is set until the request is on disk; its card goes out
	// only then.
	journaling bool
	// installing is set once the owner approved.
	installing bool
}

// maxSkillOutcomes bounds the outcomes kept for status queries.
const maxSkillOutcomes = 64

// SkillInstaller runs the skill install flow of spec 10.4 and INV-06:
// deterministic validation, the owner's skill_install approval on a
// Review card, an Ed25519 token bound to the skill hash, dry runs in a
// fresh sandbox with the skill read-only, then the exact validated bytes
// in skills_dir, the install record in Badger and a new snapshot for the
// rest of the daemon. It also removes skills.
//
// The card is an approval_request with scope skill_install. The owner
// Scope sends it to the owner's connections (ownerBroadcast) and hands
// back the approval_responses it does not know; a connection that attaches
// later is sent every pending card (skillCardsFor). Validation, the
// install and the removal run in tracked goroutines; their results come
// back as messages. One request per skill name at a time.
//
// Each request is journaled in Badger (persistence.SkillRequest) before
// its card goes out and deleted when it ends, so a restart of the actor or
// of the daemon puts the same cards back (same request id and expiry)
// once their directories validate to the same hash; an approval that was
// installing when Silas stopped comes back as a card to answer again.
//
// Supervision: the default restart; the journal rebuilds the state.
type SkillInstaller struct {
	d        *shared
	o        SkillInstallerOptions
	requests map[string]*installRequest
	order    []string          // request ids, oldest first
	byName   map[string]string // skill name -> request id
	outcomes map[string]SkillInstallOutcome
	outOrder []string
	// outbox holds events for the owner's connections until the owner
	// scope's address arrives.
	outbox []any
}

func newSkillInstaller(d *shared, o SkillInstallerOptions) *SkillInstaller {
	return &SkillInstaller{
		d: d, o: o,
		requests: map[string]*installRequest{}, byName: map[string]string{}, outcomes: map[string]SkillInstallOutcome{},
	}
}

// Receive handles requests, the owner's answers and IO results.
func (s *SkillInstaller) Receive(c actor.Context) {
	switch m := c.Message().(type) {
	case *actor.Started:
		s.restore(c)
	case *InstallSkill:
		s.onInstall(c, m)
	case *installValidated:
		s.onValidated(c, m)
	case *installJournaled:
		s.onJournaled(c, m)
	case *installsRestored:
		if m.err != nil {
			s.d.Log.Error().Err(m.err).Msg("restore the pending skill install cards; they are lost until the skills are installed again")
		}
	case *messages.ApprovalResponse:
		s.onApprovalResponse(c, m)
	case *installExpired:
		s.onExpired(c, m)
	case *installDone:
		s.onInstallDone(c, m)
	case *RemoveSkill:
		s.onRemove(c, m)
	case *removeDone:
		s.onRemoveDone(c, m)
	case *skillCardsFor:
		for _, id := range s.order {
			if r := s.requests[id]; r != nil && !r.installing && !r.journaling {
				send(m.sink, r.event)
			}
		}
	case *skillRequestsQuery:
		s.onQuery(c)
	case *messages.ScopeRef:
		s.onOwnerScope(c, m)
	case *actor.Stopping:
		for _, r := range s.requests {
			if r.cancel != nil {
				r.cancel()
			}
		}
	}
}

// current is the snapshot in force, never nil and with a catalog.
func (s *SkillInstaller) current() *skills.Snapshot {
	var snap *skills.Snapshot
	if s.o.Current != nil {
		snap = s.o.Current()
	}
	if snap == nil || snap.Catalog == nil {
		empty, _ := skills.Load("", nil)
		var approved map[string]string
		if snap != nil {
			approved = snap.Approved
		}
		snap = &skills.Snapshot{Catalog: empty, Approved: approved}
	}
	return snap
}

func (s *SkillInstaller) audit(event string, data map[string]any) {
	s.d.sys.Root.Send(s.d.audit, &messages.AuditEvent{Time: s.d.now(), Event: event, Scope: s.d.Config.OwnerID, Data: data})
}

// toOwner sends events to every owner connection, through the owner scope.
func (s *SkillInstaller) toOwner(c actor.Context, events ...any) {
	s.outbox = append(s.outbox, events...)
	c.Request(s.d.stream, &messages.ScopeFor{ScopeID: s.d.Config.OwnerID, Kind: messages.ScopeOwner})
}

func (s *SkillInstaller) onOwnerScope(c actor.Context, m *messages.ScopeRef) {
	if m.ScopeID != s.d.Config.OwnerID || m.PID == nil || len(s.outbox) == 0 {
		return
	}
	c.Send(m.PID, &ownerBroadcast{events: s.outbox})
	s.outbox = nil
}

func (s *SkillInstaller) onQuery(c actor.Context) {
	r := &skillRequestsReply{pending: []messages.SkillInstallRequestEvent{}, outcomes: make([]SkillInstallOutcome, 0, len(s.outOrder))}
	for _, id := range s.order {
		if q := s.requests[id]; q != nil && !q.installing && !q.journaling {
			r.pending = append(r.pending, *q.event)
		}
	}
	for _, id := range s.outOrder {
		r.outcomes = append(r.outcomes, s.outcomes[id])
	}
	c.Respond(r)
}

// forget ends request r: its name is free again, its staging and its
// journal record go, the owner hears the outcome and Notify gets it.
func (s *SkillInstaller) forget(c actor.Context, r *installRequest, status, detail string) {
	s.drop(r)
	removeStaging(s.d, r.stage)
	s.forgetRecord(r.id)
	out := SkillInstallOutcome{RequestID: r.id, Name: r.skill.Name, Hash: r.skill.Hash(), Status: status, Detail: detail}
	s.outcomes[r.id] = out
	s.outOrder = append(s.outOrder, r.id)
	if len(s.outOrder) > maxSkillOutcomes {
		delete(s.outcomes, s.outOrder[0])
		s.outOrder = s.outOrder[1:]
	}
	s.toOwner(c, &messages.SkillInstallResultEvent{
		Type: messages.EventSkillInstallResult, RequestID: r.id, Name: r.skill.Name, Status: status, Hash: r.skill.Hash(), Detail: detail,
	})
	if r.req.Notify != nil {
		c.Send(r.req.Notify, &out)
	}
}

// drop removes r from the actor's state.
func (s *SkillInstaller) drop(r *installRequest) {
	delete(s.requests, r.id)
	if i := slices.Index(s.order, r.id); i >= 0 {
		s.order = slices.Delete(s.order, i, i+1)
	}
	if s.byName[r.skill.Name] == r.id {
		delete(s.byName, r.skill.Name)
	}
}

// forgetRecord deletes the journal record of request id in the background.
func (s *SkillInstaller) forgetRecord(id string) {
	db, log := s.d.DB, s.d.Log
	if db == nil {
		return
	}
	s.d.tasks.Go("forget skill request", func(ctx context.Context) {
		if err := db.SkillRequests().Delete(ctx, id); err != nil {
			log.Warn().Err(err).Str("request_id", id).Msg("delete a finished skill install request; its card may come back after a restart")
		}
	}, nil)
}
