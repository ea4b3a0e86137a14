package actors

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/scheduler"
	"github.com/google/uuid"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/persistence"
	"github.com/silas-ai/silas/runtime/review"
	"github.com/silas-ai/silas/skills"
)

// onInstall validates the requested skill off the mailbox.
func (s *SkillInstaller) onInstall(c actor.Context, m *InstallSkill) {
	from := c.Sender()
	answer := func(a *SkillInstallAnswer) {
		if from != nil {
			c.Send(from, a)
		}
	}
	if s.d.Approval == nil {
		answer(&SkillInstallAnswer{Err: fmt.Errorf("install %s: %w; run it through `silas serve`", m.Dir, ErrSkillsUnavailable)})
		return
	}
	if imp := s.d.Config.Skills.Import; m.Import && (!imp.AllowExternal || !slices.Contains(imp.AllowedSources, "local_path")) {
		answer(&SkillInstallAnswer{Err: fmt.Errorf("import %s: %w: imports from local directories are off; set silas.skills.import.allow_external: true and add local_path to silas.skills.import.allowed_sources",
			m.Dir, skills.ErrImport)})
		return
	}
	self, root, o := c.Self(), s.d.sys.Root, s.o
	reply := func(v *installValidated) { v.req, v.from = m, from; root.Send(self, v) }
	if !s.d.tasks.Go("validate skill", func(ctx context.Context) { reply(validateRequest(ctx, o, m)) },
		func(err error) { reply(&installValidated{err: err}) }) {
		answer(&SkillInstallAnswer{Err: errShuttingDown})
	}
}

// onValidated refuses a skill that failed validation (no card) or
// journals its request and then puts its card to the owner. A request
// restored from the journal after a restart comes back here too, with its
// id and expiry, and its card goes out again only if the directory still
// hashes to what the card showed.
func (s *SkillInstaller) onValidated(c actor.Context, m *installValidated) {
	answer := func(a *SkillInstallAnswer) {
		if m.from != nil {
			c.Send(m.from, a)
		}
	}
	refuse := func(err error) {
		removeStaging(s.d, m.stage)
		a := &SkillInstallAnswer{Transformation: m.trans, Err: err}
		if m.skill != nil || len(m.report.Findings) > 0 {
			a.Name, a.Hash, a.Report = m.report.Skill, m.report.Hash, &m.report
		}
		answer(a)
		switch {
		case m.restored != nil:
			rec := m.restored
			s.forgetRecord(rec.RequestID)
			s.audit("install_restore_failed", map[string]any{"request_id": rec.RequestID, "skill": rec.Name, "hash": rec.Hash, "error": err.Error()})
			s.toOwner(c, &messages.SkillInstallResultEvent{
				Type: messages.EventSkillInstallResult, RequestID: rec.RequestID, Name: rec.Name, Hash: rec.Hash, Status: messages.SkillInstallFailed,
				Detail: fmt.Sprintf("the card could not be restored after the restart: %v; nothing was installed, install it again", err),
			})
		case m.req.workItem != "":
			// Nobody waits on a work item's proposal: the owner hears why
			// there is no card.
			s.toOwner(c, &messages.SkillInstallResultEvent{
				Type: messages.EventSkillInstallResult, RequestID: uuid.NewString(), Name: m.req.Name, Status: messages.SkillInstallFailed,
				Detail: fmt.Sprintf("the skill work item %s staged was not proposed: %v; nothing was installed", m.req.workItem, err),
			})
		}
	}
	if m.restored != nil && !s.d.now().Before(m.restored.ExpiresAt) {
		s.expireRestored(c, m)
		return
	}
	if m.err != nil {
		refuse(m.err)
		return
	}
	if !m.report.Passed || m.skill == nil {
		rules := []string{}
		for _, f := range m.report.Errors() {
			if !slices.Contains(rules, f.Rule) {
				rules = append(rules, f.Rule)
			}
		}
		s.audit("install_validation_failed", map[string]any{"skill": m.report.Skill, "dir": m.dir, "errors": len(m.report.Errors()), "rules": rules})
		refuse(fmt.Errorf("skill %s: %w: %s", m.report.Skill, ErrSkillInvalid, firstErrors(m.report)))
		return
	}
	sk := m.skill
	snap := s.current()
	if e, ok := snap.Catalog.Get(sk.Name); ok && e.Origin == skills.OriginBundled {
		refuse(fmt.Errorf("skill %s: %w; rename the skill (its name and its directory)", sk.Name, ErrSkillBundled))
		return
	}
	if id, busy := s.byName[sk.Name]; busy {
		refuse(fmt.Errorf("skill %s: %w (request %s): approve or decline it first", sk.Name, ErrSkillBusy, id))
		return
	}
	dest := filepath.Join(s.o.Dir, sk.Name)
	if snap.Approved[sk.Name] == sk.Hash() && (sameDir(m.dir, dest) || m.restored != nil) {
		refuse(fmt.Errorf("skill %s: %w", sk.Name, ErrSkillUnchanged))
		return
	}
	if m.restored != nil && m.restored.Hash != sk.Hash() {
		refuse(fmt.Errorf("skill %s: its files changed while Silas was down (hash %s, the card showed %s)", sk.Name, sk.Hash(), m.restored.Hash))
		return
	}
	origin := m.req.Origin
	switch {
	case m.req.Import:
		origin = SkillOriginImported
	case origin == "":
		origin = SkillOriginLocal
	}
	card, err := skillCard(sk, m.report, m.trans, origin, m.dir, snap.Approved[sk.Name])
	if err != nil {
		refuse(err)
		return
	}
	r := &installRequest{id: uuid.NewString(), req: m.req, from: m.from, skill: sk, dir: m.dir, origin: origin, stage: m.stage}
	expires := s.d.now().Add(s.timeout()).UTC()
	if m.restored != nil {
		r.id, expires = m.restored.RequestID, m.restored.ExpiresAt
	}
	// Installing code that work items run is high (spec 0.5.2).
	skillRisk := review.Assign(review.Action{Scope: messages.ApprovalSkillInstall})
	verb := "Install"
	if origin == SkillOriginImported {
		verb = "Import"
	}
	r.event = &messages.SkillInstallRequestEvent{
		Type: messages.EventApprovalRequest, RequestID: r.id, Scope: messages.ApprovalSkillInstall,
		Title: fmt.Sprintf("%s skill %s", verb, sk.Name), Body: cardBody(card, m.report), RiskLevel: string(skillRisk),
		ExpiresAt: expires, Skill: card,
	}
	r.event.Card = skillContract(s.d.Log, r.event, skillRisk)
	r.answer = &SkillInstallAnswer{RequestID: r.id, Name: sk.Name, Hash: sk.Hash(), ExpiresAt: expires, Report: &m.report, Transformation: m.trans}
	s.requests[r.id] = r
	s.order = append(s.order, r.id)
	s.byName[sk.Name] = r.id
	if m.restored != nil {
		s.audit("install_restored", map[string]any{"request_id": r.id, "skill": sk.Name, "hash": sk.Hash(), "origin": origin})
		s.putOut(c, r)
		return
	}
	s.audit("install_requested", map[string]any{
		"request_id": r.id, "skill": sk.Name, "version": sk.Version, "hash": sk.Hash(), "origin": origin, "dir": m.dir, "work_item_id": m.req.workItem,
		"files": len(sk.Files()), "scripts": len(card.Scripts), "warnings": len(m.report.Findings), "replaces": card.Replaces,
	})
	s.journalRequest(c, r, m.trans)
}

// journalRequest stores r before its card goes out, off the mailbox;
// installJournaled brings the result back.
func (s *SkillInstaller) journalRequest(c actor.Context, r *installRequest, trans *skills.TransformationReport) {
	r.journaling = true
	rec := persistence.SkillRequest{
		RequestID: r.id, Name: r.skill.Name, Hash: r.skill.Hash(), Dir: r.dir, Stage: r.stage, Origin: r.origin,
		WorkItemID: r.req.workItem, CreatedAt: s.d.now().UTC(), ExpiresAt: r.event.ExpiresAt,
	}
	if trans != nil {
		b, err := json.Marshal(trans)
		if err != nil {
			c.Send(c.Self(), &installJournaled{id: r.id, err: fmt.Errorf("encode the transformation report: %w", err)})
			return
		}
		rec.Transformation = b
	}
	self, root, db := c.Self(), s.d.sys.Root, s.d.DB
	reply := func(err error) { root.Send(self, &installJournaled{id: r.id, err: err}) }
	if db == nil {
		reply(nil) // no store (tests of the actor alone): nothing survives a restart anyway
		return
	}
	if !s.d.tasks.Go("journal skill request", func(ctx context.Context) { reply(db.SkillRequests().Put(ctx, rec)) }, reply) {
		reply(errShuttingDown)
	}
}

// onJournaled puts the card out once its request is on disk, or ends the
// request when it could not be stored.
func (s *SkillInstaller) onJournaled(c actor.Context, m *installJournaled) {
	r := s.requests[m.id]
	if r == nil || !r.journaling {
		return
	}
	r.journaling = false
	if m.err != nil {
		s.drop(r)
		removeStaging(s.d, r.stage)
		if r.from != nil {
			c.Send(r.from, &SkillInstallAnswer{Name: r.skill.Name, Hash: r.skill.Hash(), Err: fmt.Errorf("record the install request of %s: %w; nothing was installed, try again", r.skill.Name, m.err)})
		}
		return
	}
	s.putOut(c, r)
}

// putOut arms r's expiry and sends its card to the owner.
func (s *SkillInstaller) putOut(c actor.Context, r *installRequest) {
	r.cancel = scheduler.NewTimerScheduler(c).SendOnce(r.event.ExpiresAt.Sub(s.d.now()), c.Self(), &installExpired{id: r.id})
	s.toOwner(c, r.event)
	if r.from != nil {
		c.Send(r.from, r.answer)
	}
}

// expireRestored ends a journaled request whose card expired while Silas
// was down.
func (s *SkillInstaller) expireRestored(c actor.Context, m *installValidated) {
	rec := m.restored
	removeStaging(s.d, m.stage)
	s.forgetRecord(rec.RequestID)
	s.audit("install_declined", map[string]any{"request_id": rec.RequestID, "skill": rec.Name, "hash": rec.Hash, "reason": "timeout"})
	s.toOwner(c, &messages.SkillInstallResultEvent{
		Type: messages.EventSkillInstallResult, RequestID: rec.RequestID, Name: rec.Name, Hash: rec.Hash, Status: messages.SkillInstallExpired,
		Detail: "the card expired while Silas was down; nothing was installed, install it again to get a new card",
	})
}

func (s *SkillInstaller) timeout() time.Duration {
	return time.Duration(s.d.Config.Approval.RequestTimeoutSeconds) * time.Second
}

// onApprovalResponse takes the owner's verdict on a card, forwarded by the
// owner Scope for request ids it does not know.
func (s *SkillInstaller) onApprovalResponse(c actor.Context, m *messages.ApprovalResponse) {
	r := s.requests[m.RequestID]
	if r == nil || r.installing || r.journaling {
		send(m.Sink, webError(messages.CodeBadRequest, "no approval is pending with request_id "+quote(m.RequestID)+"; it was already answered or timed out", messages.TypeApprovalResponse))
		return
	}
	if m.Verdict.Approves() && refuseRung(s.d, m.Sink, messages.TypeApprovalResponse, m.RequestID, r.event.RiskLevel, m.Confirmed) {
		return // the card stays pending: answer it again with its rung
	}
	r.cancel()
	if !m.Verdict.Approves() {
		s.audit("install_declined", map[string]any{"request_id": r.id, "skill": r.skill.Name, "hash": r.skill.Hash(), "reason": "declined"})
		s.forget(c, r, messages.SkillInstallDeclined, "you declined it; nothing was installed")
		return
	}
	r.installing = true
	self, root, d, o := c.Self(), s.d.sys.Root, s.d, s.o
	reply := func(v *installDone) { v.id = r.id; root.Send(self, v) }
	job := installJob{d: d, o: o, id: r.id, skill: r.skill, dir: r.dir, source: recordSource(r.origin)}
	if !s.d.tasks.Go("install skill", func(ctx context.Context) { reply(job.run(ctx)) },
		func(err error) { reply(&installDone{status: messages.SkillInstallFailed, detail: err.Error()}) }) {
		reply(&installDone{status: messages.SkillInstallFailed, detail: "Silas is shutting down; nothing was installed, install it again after the restart"})
	}
}

func (s *SkillInstaller) onExpired(c actor.Context, m *installExpired) {
	r := s.requests[m.id]
	if r == nil || r.installing {
		return
	}
	s.audit("install_declined", map[string]any{"request_id": r.id, "skill": r.skill.Name, "hash": r.skill.Hash(), "reason": "timeout"})
	s.forget(c, r, messages.SkillInstallExpired, "nobody answered the card in time; nothing was installed, install it again to get a new card")
}

// onInstallDone publishes the new snapshot of an installed skill and ends
// the request.
func (s *SkillInstaller) onInstallDone(c actor.Context, m *installDone) {
	r := s.requests[m.id]
	if r == nil {
		return
	}
	if m.snap != nil {
		s.publish(m.snap)
	}
	s.forget(c, r, m.status, m.detail)
}

func (s *SkillInstaller) publish(snap *skills.Snapshot) {
	if s.o.Publish != nil {
		s.o.Publish(snap)
	}
}

// onRemove uninstalls a skill off the mailbox; bundled skills are refused.
func (s *SkillInstaller) onRemove(c actor.Context, m *RemoveSkill) {
	from := c.Sender()
	answer := func(a *SkillRemoveAnswer) {
		if from != nil {
			c.Send(from, a)
		}
	}
	if e, ok := s.current().Catalog.Get(m.Name); ok && e.Origin == skills.OriginBundled {
		answer(&SkillRemoveAnswer{Name: m.Name, Err: fmt.Errorf("skill %s: %w", m.Name, ErrSkillBundled)})
		return
	}
	if id, busy := s.byName[m.Name]; busy {
		answer(&SkillRemoveAnswer{Name: m.Name, Err: fmt.Errorf("skill %s: %w (request %s): answer its card first", m.Name, ErrSkillBusy, id)})
		return
	}
	self, root, d, o := c.Self(), s.d.sys.Root, s.d, s.o
	reply := func(v *removeDone) { v.name, v.from = m.Name, from; root.Send(self, v) }
	if !s.d.tasks.Go("remove skill", func(ctx context.Context) { reply(removeSkill(ctx, d, o, m.Name)) },
		func(err error) { reply(&removeDone{err: err}) }) {
		answer(&SkillRemoveAnswer{Name: m.Name, Err: errShuttingDown})
		return
	}
	// No install of the name starts while its files are being deleted.
	s.byName[m.Name] = removalID
}

// removalID holds a skill's name in byName while it is being removed.
const removalID = "removal"

// onRemoveDone publishes the snapshot without the skill and tells every
// scope, whose work items using it end blocked.
func (s *SkillInstaller) onRemoveDone(c actor.Context, m *removeDone) {
	if s.byName[m.name] == removalID {
		delete(s.byName, m.name)
	}
	switch {
	case m.snap != nil:
		s.publish(m.snap)
	case m.deleted:
		// The reload failed: drop the approval from the snapshot at least,
		// so that no plan binds the removed skill.
		cur := s.current()
		approved := maps.Clone(cur.Approved)
		delete(approved, m.name)
		s.publish(&skills.Snapshot{Catalog: cur.Catalog, Approved: approved})
	}
	if m.err == nil || m.deleted {
		s.audit("skill_removed", map[string]any{"skill": m.name, "hash": m.hash})
		c.Send(s.d.stream, &messages.SkillRemoved{Name: m.name, Hash: m.hash,
			Reason: fmt.Sprintf("the owner removed skill %s; install it again (silas skills install) to run work that needs it", m.name)})
	}
	if m.from != nil {
		c.Send(m.from, &SkillRemoveAnswer{Name: m.name, Hash: m.hash, Err: m.err})
	}
}

// recordSource maps a request's origin onto the install record's source.
func recordSource(origin string) persistence.SkillSource {
	if origin == SkillOriginImported {
		return persistence.SkillImported
	}
	return persistence.SkillLocal
}
