package actors

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/google/uuid"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/persistence"
	"github.com/silas-ai/silas/skills"
	"github.com/silas-ai/silas/skills/manifest"
)

// The IO of the skill installer. Each function runs in a tracked goroutine
// and returns its result as the message the SkillInstaller receives.

// checkRunner is the sandbox runner of the Python syntax check, or nil when
// no sandbox is configured (validation then fails closed).
func checkRunner(o SkillInstallerOptions) skills.Runner {
	if o.Sandbox == nil {
		return nil
	}
	return skills.SandboxRunner{Manager: o.Sandbox, Timeout: o.CheckTimeout}
}

// validateRequest adapts an import into a staging directory and runs the
// deterministic checks of spec 10.4 on the skill directory.
func validateRequest(ctx context.Context, o SkillInstallerOptions, m *InstallSkill) *installValidated {
	v := &installValidated{}
	dir := m.Dir
	if m.files != nil {
		if o.StagingDir == "" {
			v.err = fmt.Errorf("skill %s from work item %s: no staging directory is configured", m.Name, m.workItem)
			return v
		}
		v.stage = filepath.Join(o.StagingDir, uuid.NewString())
		dir = filepath.Join(v.stage, m.Name)
		if err := writeEntries(dir, m.files); err != nil {
			v.err = fmt.Errorf("stage skill %s from work item %s: %w", m.Name, m.workItem, err)
			return v
		}
	}
	if m.Import {
		if o.StagingDir == "" {
			v.err = fmt.Errorf("import %s: %w: no staging directory is configured", m.Dir, skills.ErrImport)
			return v
		}
		v.stage = filepath.Join(o.StagingDir, uuid.NewString())
		im, err := skills.Import(dir, skills.ImportOptions{StagingRoot: v.stage, FormatHint: m.FormatHint, Name: m.Name})
		rep := im.Report
		v.trans = &rep
		if err != nil && im.Dir == "" {
			v.err = err
			return v
		}
		// An adapted skill that still breaks the format gets the report
		// of what is wrong with it, like any invalid skill.
		dir = im.Dir
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		v.err = fmt.Errorf("skill directory %q: %w", dir, err)
		return v
	}
	v.dir = abs
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		v.err = fmt.Errorf("%s is not a directory the daemon can read: give the skill's directory (the one holding SKILL.md) as an absolute path", abs)
		return v
	}
	v.skill, v.report = skills.ValidateDir(ctx, abs, skills.OptionsFromConfig(o.Validation, checkRunner(o)))
	return v
}

// removeStaging deletes an import's staging directory in the background.
func removeStaging(d *shared, stage string) {
	if stage == "" {
		return
	}
	d.tasks.Go("remove skill staging", func(context.Context) {
		if err := os.RemoveAll(stage); err != nil {
			d.Log.Warn().Err(err).Str("dir", stage).Msg("remove skill import staging")
		}
	}, nil)
}

// sameDir reports whether a and b name the same directory path.
func sameDir(a, b string) bool {
	aa, err1 := filepath.Abs(a)
	bb, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && filepath.Clean(aa) == filepath.Clean(bb)
}

// auditFrom appends an audit event from an IO goroutine.
func auditFrom(d *shared, event string, data map[string]any) {
	d.sys.Root.Send(d.audit, &messages.AuditEvent{Time: d.now(), Event: event, Scope: d.Config.OwnerID, Data: data})
}

// installJob is an approved install: token, dry runs, files, record.
type installJob struct {
	d      *shared
	o      SkillInstallerOptions
	id     string
	skill  *skills.Skill
	dir    string
	source persistence.SkillSource
}

// run performs the install after the owner approved (spec 10.4 steps 4-6):
// it mints and verifies the skill_install token bound to the skill hash,
// writes the validated bytes into a private directory under skills_dir,
// dry-runs every script there in a fresh sandbox with the skill read-only,
// moves the directory into place (or, for a skill written in skills_dir,
// checks that its files are still those approved), stores the install
// record and loads the new snapshot. Any failure installs nothing.
func (j installJob) run(ctx context.Context) *installDone {
	sk := j.skill
	base := map[string]any{"request_id": j.id, "skill": sk.Name, "hash": sk.Hash()}
	with := func(kv ...any) map[string]any {
		m := make(map[string]any, len(base)+len(kv)/2)
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	failed := func(step string, err error, detail string) *installDone {
		auditFrom(j.d, "install_failed", with("step", step, "error", err.Error()))
		return &installDone{status: messages.SkillInstallFailed, detail: detail + ": " + err.Error() + "; nothing was installed"}
	}

	subject := installSubject(j.id, sk)
	decision := messages.ApprovalDecision{
		Verdict: messages.VerdictApproved, ApprovalStrength: messages.StrengthTap,
		Conditions: map[string]any{"skill": sk.Name, "skill_hash": sk.Hash()},
	}
	tok, err := j.d.Approval.IssueToken(subject, decision, messages.ApprovalSkillInstall)
	if err == nil {
		err = j.d.Approval.Verify(ctx, tok, subject, nil)
	}
	if err != nil {
		return failed("approval", err, "the approval could not be recorded")
	}
	auditFrom(j.d, "install_approved", with("token_id", tok.TokenID, "scope", string(tok.Scope)))

	if err := os.MkdirAll(j.o.Dir, 0o755); err != nil {
		return failed("skills_dir", err, "cannot create silas.skills_dir "+j.o.Dir)
	}
	work := filepath.Join(j.o.Dir, ".install-"+j.id)
	defer func() {
		if err := os.RemoveAll(work); err != nil {
			j.d.Log.Warn().Err(err).Str("dir", work).Msg("remove skill install work dir")
		}
	}()
	staged := filepath.Join(work, sk.Name)
	if err := writeSkillFiles(staged, sk); err != nil {
		return failed("write", err, "cannot write the skill's files")
	}
	if again, err := skills.ParseDir(staged); err != nil || again.Hash() != sk.Hash() {
		if err == nil {
			err = fmt.Errorf("the written files hash to %s, not the approved %s", again.Hash(), sk.Hash())
		}
		return failed("write", err, "the skill's files did not write back as approved")
	}

	runs := sk.DryRuns()
	for _, in := range runs {
		r := skills.SandboxRunner{Manager: j.o.Sandbox, ReadOnly: []string{staged}, Timeout: j.o.CheckTimeout}
		res, err := r.Run(ctx, in.Argv(staged), nil)
		if err == nil && res.ExitCode == 0 {
			continue
		}
		why := ""
		if err != nil {
			why = err.Error()
		} else {
			why = fmt.Sprintf("exit status %d", res.ExitCode)
			if msg := lastLine(res.Stderr); msg != "" {
				why += ": " + msg
			}
		}
		exit := -1
		if err == nil {
			exit = res.ExitCode
		}
		auditFrom(j.d, "dry_run_failed", with("script", in.Script, "args", in.Args, "exit_code", exit, "sandbox_error", err != nil))
		return &installDone{status: messages.SkillInstallDryRunFail, detail: fmt.Sprintf(
			"the dry run `%s %s` failed in the sandbox (%s); nothing was installed: fix the script and install the skill again",
			in.Script, strings.Join(in.Args, " "), why)}
	}
	scripts := make([]string, 0, len(runs))
	for _, in := range runs {
		scripts = append(scripts, strings.TrimSpace(in.Script+" "+strings.Join(in.Args, " ")))
	}
	auditFrom(j.d, "dry_runs_passed", with("runs", len(runs), "calls", scripts))

	dest := filepath.Join(j.o.Dir, sk.Name)
	if sameDir(j.dir, dest) {
		// Written in skills_dir by the owner: what is there must still be
		// what the owner reviewed.
		now, err := skills.ParseDir(dest)
		if err == nil && now.Hash() != sk.Hash() {
			err = fmt.Errorf("%s changed since you reviewed it", dest)
		}
		if err != nil {
			return failed("verify", err, "the skill's files are not the ones you approved (install it again to review them)")
		}
	} else if err := swapIn(staged, dest, filepath.Join(work, "previous")); err != nil {
		return failed("place", err, "cannot move the skill into "+dest)
	}

	rec := persistence.InstalledSkill{
		Name: sk.Name, Version: sk.Version, Source: j.source, Hash: sk.Hash(), Files: sk.Files(),
		ApprovalTokenID: tok.TokenID, ApprovalNonce: tok.Nonce, InstalledAt: j.d.now(),
	}
	if err := j.d.DB.Skills().Put(ctx, rec); err != nil {
		return failed("record", err, "the install record could not be stored")
	}
	snap, probs, err := LoadSkills(ctx, j.d.DB, j.o.Dir, j.o.Bundled)
	for _, p := range probs {
		j.d.Log.Warn().Str("skill", p.Name).Err(p.Err).Msg("skill not loaded")
	}
	if err != nil {
		// Installed; the snapshot catches up with the next install,
		// removal or restart.
		j.d.Log.Error().Err(err).Str("skill", sk.Name).Msg("reload skills after install")
		snap = nil
	}
	auditFrom(j.d, "skill_installed", with("version", sk.Version, "source", string(j.source), "token_id", tok.TokenID, "files", len(rec.Files)))
	return &installDone{status: messages.SkillInstallInstalled, snap: snap}
}

// installSubject is what a skill_install token approves: a work item that
// names the skill, with the skill hash bound in its body and skill_hashes
// (so in the token's plan hash) and again in the token's signed
// conditions. It never runs; it exists so that the approval engine's
// binding, signature and replay protection apply to installs unchanged.
func installSubject(requestID string, sk *skills.Skill) *messages.WorkItem {
	return &messages.WorkItem{
		ID: "skill-install-" + requestID, Type: messages.WorkTask, Title: "Install skill " + sk.Name,
		Body:   fmt.Sprintf("skill_install name=%s version=%q hash=%s", sk.Name, sk.Version, sk.Hash()),
		Skills: []string{sk.Name},
	}
}

// writeSkillFiles writes the skill's exact validated bytes under dir, which
// must not exist yet, through an os.Root.
func writeSkillFiles(dir string, sk *skills.Skill) error {
	files := sk.Files()
	entries := make([]manifest.Entry, 0, len(files))
	for _, f := range files {
		data, ok := sk.ReadFile(f.Path)
		if !ok {
			return fmt.Errorf("%s: no bytes for a listed file", f.Path)
		}
		entries = append(entries, manifest.Entry{File: f, Data: data})
	}
	return writeEntries(dir, entries)
}

// writeEntries creates dir (which must not exist) and writes entries into
// it through an os.Root.
func writeEntries(dir string, entries []manifest.Entry) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer func() { _ = root.Close() }()
	for _, e := range entries {
		if d := path.Dir(e.Path); d != "." {
			if err := root.MkdirAll(d, 0o755); err != nil {
				return err
			}
		}
		if err := root.WriteFile(e.Path, e.Data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// swapIn moves staged to dest, moving an existing dest aside to previous
// first and back if the move fails.
func swapIn(staged, dest, previous string) error {
	moved := false
	if _, err := os.Lstat(dest); err == nil {
		if err := os.Rename(dest, previous); err != nil {
			return fmt.Errorf("move the installed version aside: %w", err)
		}
		moved = true
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.Rename(staged, dest); err != nil {
		if moved {
			_ = os.Rename(previous, dest)
		}
		return err
	}
	return nil
}

// lastLine returns the last non-empty line of b, at most 300 bytes.
func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	l := strings.TrimSpace(lines[len(lines)-1])
	if len(l) > 300 {
		l = l[:300] + "..."
	}
	return l
}

// removeSkill deletes a skill's install record (it stops being usable at
// once) and then its directory under skills_dir.
func removeSkill(ctx context.Context, d *shared, o SkillInstallerOptions, name string) *removeDone {
	if err := manifest.ValidName(name); err != nil {
		return &removeDone{err: fmt.Errorf("skill %q: %w: %v", name, ErrSkillNotInstalled, err)}
	}
	rec, err := d.DB.Skills().Get(ctx, name)
	installed := err == nil
	if err != nil && !errors.Is(err, persistence.ErrNotFound) {
		return &removeDone{err: fmt.Errorf("read the install record of %s: %w", name, err)}
	}
	if installed && rec.Source == persistence.SkillBundled {
		return &removeDone{err: fmt.Errorf("skill %s: %w", name, ErrSkillBundled)}
	}
	dest := filepath.Join(o.Dir, name)
	_, statErr := os.Lstat(dest)
	if !installed && statErr != nil {
		return &removeDone{err: fmt.Errorf("skill %q: %w in %s; list them with `silas skills list`", name, ErrSkillNotInstalled, o.Dir)}
	}
	if installed {
		if err := d.DB.Skills().Delete(ctx, name); err != nil {
			return &removeDone{err: fmt.Errorf("delete the install record of %s: %w", name, err)}
		}
	}
	out := &removeDone{hash: rec.Hash, deleted: installed}
	if statErr == nil {
		if err := os.RemoveAll(dest); err != nil {
			out.err = fmt.Errorf("skill %s is uninstalled but its files could not be deleted: %w; delete %s by hand", name, err, dest)
		}
	}
	snap, _, err := LoadSkills(ctx, d.DB, o.Dir, o.Bundled)
	if err != nil {
		d.Log.Error().Err(err).Str("skill", name).Msg("reload skills after removal")
	}
	out.snap = snap
	return out
}
