package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/silas-ai/silas/actors"
	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/persistence"
	"github.com/silas-ai/silas/skills"
	"github.com/silas-ai/silas/skills/bundled"
)

// codeValidationFailed answers 422: the skill failed the deterministic
// checks of spec 10.4 and no card went out.
const codeValidationFailed messages.Code = "validation_failed"

// Limits of the skill endpoints.
const (
	maxSkillBody = 8 << 10
	// skillCallTimeout bounds install and import: validation runs the
	// Python syntax check in a sandbox.
	skillCallTimeout = 90 * time.Second
)

// skillsAPI serves the owner's skill endpoints (`silas skills`): list,
// show, install, import and remove, on the running daemon, which owns the
// database and the SkillInstaller.
type skillsAPI struct {
	sys   *actors.System
	db    *persistence.DB
	snaps *skillSnapshots
}

func (a *skillsAPI) routes() map[string]fasthttp.RequestHandler {
	return map[string]fasthttp.RequestHandler{
		"GET /skills":          a.list,
		"GET /skills/":         a.show,
		"POST /skills/install": a.install,
		"POST /skills/import":  a.importSkill,
		"DELETE /skills/":      a.remove,
	}
}

// Bodies of the skill endpoints (docs/owner-api.md "Skills").
type (
	skillInstallBody struct {
		Dir string `json:"dir"`
	}
	skillImportBody struct {
		Dir    string `json:"dir"`
		Format string `json:"format"`
		Name   string `json:"name"`
	}
	// skillRequestView is an install request whose card went out, or a
	// refused one (then Error holds the web error fields).
	skillRequestView struct {
		RequestID            string                       `json:"request_id,omitempty"`
		Skill                string                       `json:"skill"`
		Hash                 string                       `json:"hash,omitempty"`
		ExpiresAt            *time.Time                   `json:"expires_at,omitempty"`
		Message              string                       `json:"message"`
		ValidationReport     *skills.ValidationReport     `json:"validation_report,omitempty"`
		TransformationReport *skills.TransformationReport `json:"transformation_report,omitempty"`
	}
	skillRefusal struct {
		messages.ErrorEvent
		ValidationReport     *skills.ValidationReport     `json:"validation_report,omitempty"`
		TransformationReport *skills.TransformationReport `json:"transformation_report,omitempty"`
	}
	// skillView is one skill as `silas skills list` shows it.
	skillView struct {
		Name        string `json:"name"`
		Version     string `json:"version"`
		Description string `json:"description"`
		Activation  string `json:"activation"`
		// Origin is where the files are: bundled (the binary) or local
		// (skills_dir).
		Origin string `json:"origin"`
		Dir    string `json:"dir,omitempty"`
		Hash   string `json:"hash"`
		// Status is installed, not_installed, changed (the files differ
		// from the approved ones; Problem names the first) or missing (a
		// record whose files do not load).
		Status          string     `json:"status"`
		Problem         string     `json:"problem,omitempty"`
		Source          string     `json:"source,omitempty"`
		InstalledHash   string     `json:"installed_hash,omitempty"`
		InstalledAt     *time.Time `json:"installed_at,omitempty"`
		ApprovalTokenID string     `json:"approval_token_id,omitempty"`
		Scripts         []string   `json:"scripts"`
	}
	skillsResponse struct {
		Skills   []skillView                  `json:"skills"`
		Problems []skillProblemView           `json:"problems"`
		Pending  []skillPendingView           `json:"pending"`
		Recent   []actors.SkillInstallOutcome `json:"recent"`
	}
	skillProblemView struct {
		Name   string `json:"name"`
		Origin string `json:"origin"`
		Dir    string `json:"dir,omitempty"`
		Error  string `json:"error"`
	}
	skillPendingView struct {
		RequestID string    `json:"request_id"`
		Skill     string    `json:"skill"`
		Hash      string    `json:"hash"`
		Origin    string    `json:"origin"`
		ExpiresAt time.Time `json:"expires_at"`
	}
	// skillDetail is `silas skills show`: the view, the instructions, the
	// files and the scripts with their argument schemas.
	skillDetail struct {
		skillView
		Requirements skills.Requirements `json:"requirements"`
		Instructions string              `json:"instructions"`
		Files        []skillFileView     `json:"files"`
		ScriptArgs   []skills.Script     `json:"script_args"`
	}
	skillFileView struct {
		Path   string `json:"path"`
		SHA256 string `json:"sha256"`
		Size   int64  `json:"size"`
	}
	skillRemoved struct {
		Removed string `json:"removed"`
		Hash    string `json:"hash,omitempty"`
		Message string `json:"message"`
	}
)

// refuseSkill answers why no card went out (or a skill was not removed),
// with the reports when there are any.
func refuseSkill(ctx *fasthttp.RequestCtx, err error, a *actors.SkillInstallAnswer) {
	status, code := fasthttp.StatusInternalServerError, messages.CodeInternal
	switch {
	case errors.Is(err, actors.ErrSkillInvalid):
		status, code = fasthttp.StatusUnprocessableEntity, codeValidationFailed
	case errors.Is(err, skills.ErrRemoteSource), errors.Is(err, skills.ErrImport):
		status, code = fasthttp.StatusBadRequest, messages.CodeBadRequest
	case errors.Is(err, actors.ErrSkillBusy), errors.Is(err, actors.ErrSkillUnchanged):
		status, code = fasthttp.StatusConflict, codeConflict
	case errors.Is(err, actors.ErrSkillBundled):
		status, code = fasthttp.StatusForbidden, messages.CodeForbidden
	case errors.Is(err, actors.ErrSkillNotInstalled):
		status, code = fasthttp.StatusNotFound, messages.CodeNotFound
	case errors.Is(err, actors.ErrSkillsUnavailable):
		status, code = fasthttp.StatusServiceUnavailable, messages.CodeUnavailable
	case strings.Contains(err.Error(), "is not a directory"):
		status, code = fasthttp.StatusBadRequest, messages.CodeBadRequest
	}
	r := skillRefusal{ErrorEvent: messages.ErrorEvent{Type: "error", Code: code, Message: err.Error()}}
	if a != nil {
		r.ValidationReport, r.TransformationReport = a.Report, a.Transformation
	}
	writeJSON(ctx, status, r)
}

func (a *skillsAPI) install(ctx *fasthttp.RequestCtx) {
	if string(ctx.Path()) != "/skills/install" {
		writeJSONError(ctx, fasthttp.StatusNotFound, messages.CodeNotFound, "no such endpoint")
		return
	}
	var body skillInstallBody
	if err := decodeOwnerBody(ctx, &body, maxSkillBody, false); err != nil {
		writeJSONError(ctx, fasthttp.StatusBadRequest, messages.CodeBadRequest, err.Error())
		return
	}
	a.request(ctx, actors.InstallSkill{Dir: body.Dir, Origin: actors.SkillOriginLocal})
}

func (a *skillsAPI) importSkill(ctx *fasthttp.RequestCtx) {
	if string(ctx.Path()) != "/skills/import" {
		writeJSONError(ctx, fasthttp.StatusNotFound, messages.CodeNotFound, "no such endpoint")
		return
	}
	var body skillImportBody
	if err := decodeOwnerBody(ctx, &body, maxSkillBody, false); err != nil {
		writeJSONError(ctx, fasthttp.StatusBadRequest, messages.CodeBadRequest, err.Error())
		return
	}
	switch f := skills.Format(body.Format); f {
	case "", skills.FormatSilas, skills.FormatOpenAI, skills.FormatClaude, skills.FormatOpenClaw:
	default:
		writeJSONError(ctx, fasthttp.StatusBadRequest, messages.CodeBadRequest,
			fmt.Sprintf("format %q: want silas, openai, claude or openclaw, or leave it out to detect it", body.Format))
		return
	}
	a.request(ctx, actors.InstallSkill{Dir: body.Dir, Import: true, FormatHint: skills.Format(body.Format), Name: body.Name})
}

// request hands an install or import to the SkillInstaller and answers
// with the card's request id (202) or why no card went out.
func (a *skillsAPI) request(ctx *fasthttp.RequestCtx, req actors.InstallSkill) {
	remote := strings.Contains(req.Dir, "://") || (strings.Contains(req.Dir, "@") && strings.Contains(req.Dir, ":"))
	switch {
	case strings.TrimSpace(req.Dir) == "":
		writeJSONError(ctx, fasthttp.StatusBadRequest, messages.CodeBadRequest, `give the skill's directory: {"dir":"/path/to/skill"}`)
		return
	case remote && !req.Import:
		writeJSONError(ctx, fasthttp.StatusBadRequest, messages.CodeBadRequest, skills.ErrRemoteSource.Error())
		return
	case !remote && !filepath.IsAbs(req.Dir):
		writeJSONError(ctx, fasthttp.StatusBadRequest, messages.CodeBadRequest,
			fmt.Sprintf("dir %q is relative; give an absolute path (the daemon does not share your working directory)", req.Dir))
		return
	}
	c, cancel := context.WithTimeout(context.Background(), skillCallTimeout)
	defer cancel()
	ans, err := a.sys.InstallSkill(c, req)
	if err == nil {
		err = ans.Err
	}
	if err != nil {
		refuseSkill(ctx, err, ans)
		return
	}
	exp := ans.ExpiresAt
	writeJSON(ctx, fasthttp.StatusAccepted, skillRequestView{
		RequestID: ans.RequestID, Skill: ans.Name, Hash: ans.Hash, ExpiresAt: &exp,
		Message: fmt.Sprintf("skill %s passed validation; approve or decline its card in the Silas app (Review) or in `silas chat` before %s (request %s)",
			ans.Name, exp.Local().Format(time.DateTime), ans.RequestID),
		ValidationReport: ans.Report, TransformationReport: ans.Transformation,
	})
}

func (a *skillsAPI) remove(ctx *fasthttp.RequestCtx) {
	name := strings.TrimPrefix(string(ctx.Path()), "/skills/")
	if name == "" || strings.Contains(name, "/") {
		writeJSONError(ctx, fasthttp.StatusNotFound, messages.CodeNotFound, "no such endpoint; remove a skill with DELETE /skills/{name}")
		return
	}
	c, cancel := context.WithTimeout(context.Background(), skillCallTimeout)
	defer cancel()
	ans, err := a.sys.RemoveSkill(c, name)
	if err == nil {
		err = ans.Err
	}
	if err != nil {
		refuseSkill(ctx, err, nil)
		return
	}
	writeJSON(ctx, fasthttp.StatusOK, skillRemoved{Removed: name, Hash: ans.Hash,
		Message: fmt.Sprintf("skill %s is uninstalled and its files are deleted; work items using it end blocked", name)})
}

func (a *skillsAPI) list(ctx *fasthttp.RequestCtx) {
	if string(ctx.Path()) != "/skills" {
		writeJSONError(ctx, fasthttp.StatusNotFound, messages.CodeNotFound, "no such endpoint")
		return
	}
	c, cancel := reqContext()
	defer cancel()
	views, probs, _, err := a.views(c)
	if err != nil {
		writeJSONError(ctx, fasthttp.StatusInternalServerError, messages.CodeInternal, err.Error())
		return
	}
	out := skillsResponse{Skills: views, Problems: probs, Pending: []skillPendingView{}, Recent: []actors.SkillInstallOutcome{}}
	if pending, recent, err := a.sys.SkillRequests(c); err == nil {
		for _, p := range pending {
			out.Pending = append(out.Pending, skillPendingView{RequestID: p.RequestID, Skill: p.Skill.Name, Hash: p.Skill.Hash, Origin: p.Skill.Origin, ExpiresAt: p.ExpiresAt})
		}
		out.Recent = append(out.Recent, recent...)
	}
	writeJSON(ctx, fasthttp.StatusOK, out)
}

func (a *skillsAPI) show(ctx *fasthttp.RequestCtx) {
	name := strings.TrimPrefix(string(ctx.Path()), "/skills/")
	if name == "" || strings.Contains(name, "/") {
		writeJSONError(ctx, fasthttp.StatusNotFound, messages.CodeNotFound, "no such endpoint; show a skill with GET /skills/{name}")
		return
	}
	c, cancel := reqContext()
	defer cancel()
	views, _, cat, err := a.views(c)
	if err != nil {
		writeJSONError(ctx, fasthttp.StatusInternalServerError, messages.CodeInternal, err.Error())
		return
	}
	i := slices.IndexFunc(views, func(v skillView) bool { return v.Name == name })
	if i < 0 {
		writeJSONError(ctx, fasthttp.StatusNotFound, messages.CodeNotFound, fmt.Sprintf("no skill %q: list them with `silas skills list`", name))
		return
	}
	d := skillDetail{skillView: views[i], Files: []skillFileView{}, ScriptArgs: []skills.Script{}}
	if e, ok := cat.Get(name); ok {
		sk := e.Skill
		d.Requirements, d.Instructions, d.ScriptArgs = sk.Requirements, sk.Body, sk.Scripts()
		for _, f := range sk.Files() {
			d.Files = append(d.Files, skillFileView{Path: f.Path, SHA256: f.SHA256, Size: f.Size})
		}
	}
	writeJSON(ctx, fasthttp.StatusOK, d)
}

// views lists the catalog's skills and the install records without a
// loadable skill, each local one checked against its record on disk now.
func (a *skillsAPI) views(ctx context.Context) ([]skillView, []skillProblemView, *skills.Catalog, error) {
	recs, err := a.db.Skills().List(ctx)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("read the installed skills: %w", err)
	}
	byName := make(map[string]persistence.InstalledSkill, len(recs))
	for _, r := range recs {
		byName[r.Name] = r
	}
	// skills_dir as it is now, not as the last snapshot saw it: a skill the
	// owner just wrote shows as not installed.
	cat, loadProbs := skills.Load(a.snaps.dirOf(), bundled.FS())
	out := []skillView{}
	seen := map[string]bool{}
	for _, name := range cat.Names() {
		e, _ := cat.Get(name)
		sk := e.Skill
		v := skillView{Name: name, Version: sk.Version, Description: sk.Description, Activation: string(sk.Activation),
			Origin: string(e.Origin), Dir: e.Dir, Hash: sk.Hash(), Status: "not_installed", Scripts: []string{}}
		for _, sc := range sk.Scripts() {
			v.Scripts = append(v.Scripts, sc.Path)
		}
		if r, ok := byName[name]; ok {
			seen[name] = true
			at := r.InstalledAt
			v.Source, v.InstalledHash, v.InstalledAt, v.ApprovalTokenID, v.Status = string(r.Source), r.Hash, &at, r.ApprovalTokenID, "installed"
			if err := a.verify(ctx, e, r); err != nil {
				v.Status, v.Problem = "changed", err.Error()
			}
		}
		out = append(out, v)
	}
	for _, r := range recs {
		if seen[r.Name] {
			continue
		}
		at := r.InstalledAt
		out = append(out, skillView{Name: r.Name, Version: r.Version, Hash: r.Hash, Status: "missing", Source: string(r.Source),
			InstalledHash: r.Hash, InstalledAt: &at, ApprovalTokenID: r.ApprovalTokenID, Scripts: []string{},
			Problem: "installed, but its files do not load from skills_dir; see the daemon's log, or remove it with `silas skills remove " + r.Name + "`"})
	}
	slices.SortFunc(out, func(x, y skillView) int { return strings.Compare(x.Name, y.Name) })
	probs := []skillProblemView{}
	for _, p := range loadProbs {
		probs = append(probs, skillProblemView{Name: p.Name, Origin: string(p.Origin), Dir: p.Dir, Error: p.Err.Error()})
	}
	return out, probs, cat, nil
}

// verify checks a skill's files as they are now against its record: a
// local skill is read from disk again, a bundled one is the binary's.
func (a *skillsAPI) verify(ctx context.Context, e skills.Entry, r persistence.InstalledSkill) error {
	if e.Origin != skills.OriginLocal {
		return r.Check(e.Skill.Manifest())
	}
	root, err := os.OpenRoot(e.Dir)
	if err != nil {
		return err
	}
	defer func() { _ = root.Close() }()
	return a.db.Skills().Verify(ctx, r.Name, root.FS())
}

// dirOf is skills_dir.
func (s *skillSnapshots) dirOf() string { return s.dir }

// pendingSkillCards are the skill_install cards waiting for the owner, for
// GET /approvals/pending.
func pendingSkillCards(ctx context.Context, sys *actors.System) []any {
	pending, _, err := sys.SkillRequests(ctx)
	out := make([]any, 0, len(pending))
	if err != nil {
		return out
	}
	for _, p := range pending {
		out = append(out, p)
	}
	return out
}
