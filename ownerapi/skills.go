package ownerapi

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

// Limits of the skill endpoints.
const (
	maxSkillBody = 8 << 10
	// skillCallTimeout bounds install and import: validation runs the
	// Python syntax check in a sandbox.
	skillCallTimeout = 90 * time.Second
)

// skillRoutes serve the owner's skill endpoints (`silas skills`): list,
// show, install, import and remove, on the running daemon, which owns the
// database and the SkillInstaller.
func (a *API) skillRoutes() map[string]fasthttp.RequestHandler {
	return map[string]fasthttp.RequestHandler{
		"GET /skills":          a.listSkills,
		"GET /skills/":         a.showSkill,
		"POST /skills/install": a.installSkill,
		"POST /skills/import":  a.importSkill,
		"DELETE /skills/":      a.removeSkill,
	}
}

// Bodies of the skill endpoints (docs/owner-api.md "Skills"); `silas
// skills` sends and decodes the same types.
type (
	// SkillInstallBody is the body of POST /skills/install.
	SkillInstallBody struct {
		Dir string `json:"dir"`
	}
	// SkillImportBody is the body of POST /skills/import.
	SkillImportBody struct {
		Dir    string `json:"dir"`
		Format string `json:"format"`
		Name   string `json:"name"`
	}
	// SkillRequestView is an install request whose card went out, or a
	// refused one (then Error holds the web error fields).
	SkillRequestView struct {
		RequestID            string                       `json:"request_id,omitempty"`
		Skill                string                       `json:"skill"`
		Hash                 string                       `json:"hash,omitempty"`
		ExpiresAt            *time.Time                   `json:"expires_at,omitempty"`
		Message              string                       `json:"message"`
		ValidationReport     *skills.ValidationReport     `json:"validation_report,omitempty"`
		TransformationReport *skills.TransformationReport `json:"transformation_report,omitempty"`
	}
	// SkillRefusal is why no card went out (or a skill was not removed),
	// with the reports when there are any.
	SkillRefusal struct {
		messages.ErrorEvent
		ValidationReport     *skills.ValidationReport     `json:"validation_report,omitempty"`
		TransformationReport *skills.TransformationReport `json:"transformation_report,omitempty"`
	}
	// SkillView is one skill as `silas skills list` shows it.
	SkillView struct {
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
	// SkillsResponse answers GET /skills.
	SkillsResponse struct {
		Skills   []SkillView                  `json:"skills"`
		Problems []SkillProblemView           `json:"problems"`
		Pending  []SkillPendingView           `json:"pending"`
		Recent   []actors.SkillInstallOutcome `json:"recent"`
	}
	// SkillProblemView is a skill that does not load.
	SkillProblemView struct {
		Name   string `json:"name"`
		Origin string `json:"origin"`
		Dir    string `json:"dir,omitempty"`
		Error  string `json:"error"`
	}
	// SkillPendingView is an install card waiting for the owner.
	SkillPendingView struct {
		RequestID string    `json:"request_id"`
		Skill     string    `json:"skill"`
		Hash      string    `json:"hash"`
		Origin    string    `json:"origin"`
		ExpiresAt time.Time `json:"expires_at"`
	}
	// SkillDetail is `silas skills show`: the view, the instructions, the
	// files and the scripts with their argument schemas.
	SkillDetail struct {
		SkillView
		Requirements skills.Requirements `json:"requirements"`
		Instructions string              `json:"instructions"`
		Files        []SkillFileView     `json:"files"`
		ScriptArgs   []skills.Script     `json:"script_args"`
	}
	// SkillFileView is one file of a skill and its hash.
	SkillFileView struct {
		Path   string `json:"path"`
		SHA256 string `json:"sha256"`
		Size   int64  `json:"size"`
	}
	// SkillRemoved answers DELETE /skills/{name}.
	SkillRemoved struct {
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
	r := SkillRefusal{ErrorEvent: messages.ErrorEvent{Type: "error", Code: code, Message: err.Error()}}
	if a != nil {
		r.ValidationReport, r.TransformationReport = a.Report, a.Transformation
	}
	WriteJSON(ctx, status, r)
}

func (a *API) installSkill(ctx *fasthttp.RequestCtx) {
	if string(ctx.Path()) != "/skills/install" {
		WriteError(ctx, fasthttp.StatusNotFound, messages.CodeNotFound, "no such endpoint")
		return
	}
	var body SkillInstallBody
	if err := decodeOwnerBody(ctx, &body, maxSkillBody, false); err != nil {
		WriteError(ctx, fasthttp.StatusBadRequest, messages.CodeBadRequest, err.Error())
		return
	}
	a.requestSkill(ctx, actors.InstallSkill{Dir: body.Dir, Origin: actors.SkillOriginLocal})
}

func (a *API) importSkill(ctx *fasthttp.RequestCtx) {
	if string(ctx.Path()) != "/skills/import" {
		WriteError(ctx, fasthttp.StatusNotFound, messages.CodeNotFound, "no such endpoint")
		return
	}
	var body SkillImportBody
	if err := decodeOwnerBody(ctx, &body, maxSkillBody, false); err != nil {
		WriteError(ctx, fasthttp.StatusBadRequest, messages.CodeBadRequest, err.Error())
		return
	}
	switch f := skills.Format(body.Format); f {
	case "", skills.FormatSilas, skills.FormatOpenAI, skills.FormatClaude, skills.FormatOpenClaw:
	default:
		WriteError(ctx, fasthttp.StatusBadRequest, messages.CodeBadRequest,
			fmt.Sprintf("format %q: want silas, openai, claude or openclaw, or leave it out to detect it", body.Format))
		return
	}
	a.requestSkill(ctx, actors.InstallSkill{Dir: body.Dir, Import: true, FormatHint: skills.Format(body.Format), Name: body.Name})
}

// requestSkill hands an install or import to the SkillInstaller and answers
// with the card's request id (202) or why no card went out.
func (a *API) requestSkill(ctx *fasthttp.RequestCtx, req actors.InstallSkill) {
	remote := strings.Contains(req.Dir, "://") || (strings.Contains(req.Dir, "@") && strings.Contains(req.Dir, ":"))
	switch {
	case strings.TrimSpace(req.Dir) == "":
		WriteError(ctx, fasthttp.StatusBadRequest, messages.CodeBadRequest, `give the skill's directory: {"dir":"/path/to/skill"}`)
		return
	case remote && !req.Import:
		WriteError(ctx, fasthttp.StatusBadRequest, messages.CodeBadRequest, skills.ErrRemoteSource.Error())
		return
	case !remote && !filepath.IsAbs(req.Dir):
		WriteError(ctx, fasthttp.StatusBadRequest, messages.CodeBadRequest,
			fmt.Sprintf("dir %q is relative; give an absolute path (the daemon does not share your working directory)", req.Dir))
		return
	}
	c, cancel := context.WithTimeout(context.Background(), skillCallTimeout)
	defer cancel()
	ans, err := a.d.Actors.InstallSkill(c, req)
	if err == nil {
		err = ans.Err
	}
	if err != nil {
		refuseSkill(ctx, err, ans)
		return
	}
	exp := ans.ExpiresAt
	WriteJSON(ctx, fasthttp.StatusAccepted, SkillRequestView{
		RequestID: ans.RequestID, Skill: ans.Name, Hash: ans.Hash, ExpiresAt: &exp,
		Message: fmt.Sprintf("skill %s passed validation; approve or decline its card in the Silas app (Review) or in `silas chat` before %s (request %s)",
			ans.Name, exp.Local().Format(time.DateTime), ans.RequestID),
		ValidationReport: ans.Report, TransformationReport: ans.Transformation,
	})
}

func (a *API) removeSkill(ctx *fasthttp.RequestCtx) {
	name := strings.TrimPrefix(string(ctx.Path()), "/skills/")
	if name == "" || strings.Contains(name, "/") {
		WriteError(ctx, fasthttp.StatusNotFound, messages.CodeNotFound, "no such endpoint; remove a skill with DELETE /skills/{name}")
		return
	}
	c, cancel := context.WithTimeout(context.Background(), skillCallTimeout)
	defer cancel()
	ans, err := a.d.Actors.RemoveSkill(c, name)
	if err == nil {
		err = ans.Err
	}
	if err != nil {
		refuseSkill(ctx, err, nil)
		return
	}
	WriteJSON(ctx, fasthttp.StatusOK, SkillRemoved{Removed: name, Hash: ans.Hash,
		Message: fmt.Sprintf("skill %s is uninstalled and its files are deleted; work items using it end blocked", name)})
}

func (a *API) listSkills(ctx *fasthttp.RequestCtx) {
	if string(ctx.Path()) != "/skills" {
		WriteError(ctx, fasthttp.StatusNotFound, messages.CodeNotFound, "no such endpoint")
		return
	}
	c, cancel := reqContext()
	defer cancel()
	views, probs, _, err := a.skillViews(c)
	if err != nil {
		WriteError(ctx, fasthttp.StatusInternalServerError, messages.CodeInternal, err.Error())
		return
	}
	out := SkillsResponse{Skills: views, Problems: probs, Pending: []SkillPendingView{}, Recent: []actors.SkillInstallOutcome{}}
	if pending, recent, err := a.d.Actors.SkillRequests(c); err == nil {
		for _, p := range pending {
			out.Pending = append(out.Pending, SkillPendingView{RequestID: p.RequestID, Skill: p.Skill.Name, Hash: p.Skill.Hash, Origin: p.Skill.Origin, ExpiresAt: p.ExpiresAt})
		}
		out.Recent = append(out.Recent, recent...)
	}
	WriteJSON(ctx, fasthttp.StatusOK, out)
}

func (a *API) showSkill(ctx *fasthttp.RequestCtx) {
	name := strings.TrimPrefix(string(ctx.Path()), "/skills/")
	if name == "" || strings.Contains(name, "/") {
		WriteError(ctx, fasthttp.StatusNotFound, messages.CodeNotFound, "no such endpoint; show a skill with GET /skills/{name}")
		return
	}
	c, cancel := reqContext()
	defer cancel()
	views, _, cat, err := a.skillViews(c)
	if err != nil {
		WriteError(ctx, fasthttp.StatusInternalServerError, messages.CodeInternal, err.Error())
		return
	}
	i := slices.IndexFunc(views, func(v SkillView) bool { return v.Name == name })
	if i < 0 {
		WriteError(ctx, fasthttp.StatusNotFound, messages.CodeNotFound, fmt.Sprintf("no skill %q: list them with `silas skills list`", name))
		return
	}
	d := SkillDetail{SkillView: views[i], Files: []SkillFileView{}, ScriptArgs: []skills.Script{}}
	if e, ok := cat.Get(name); ok {
		sk := e.Skill
		d.Requirements, d.Instructions, d.ScriptArgs = sk.Requirements, sk.Body, sk.Scripts()
		for _, f := range sk.Files() {
			d.Files = append(d.Files, SkillFileView{Path: f.Path, SHA256: f.SHA256, Size: f.Size})
		}
	}
	WriteJSON(ctx, fasthttp.StatusOK, d)
}

// skillViews lists the catalog's skills and the install records without a
// loadable skill, each local one checked against its record on disk now.
func (a *API) skillViews(ctx context.Context) ([]SkillView, []SkillProblemView, *skills.Catalog, error) {
	recs, err := a.d.DB.Skills().List(ctx)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("read the installed skills: %w", err)
	}
	byName := make(map[string]persistence.InstalledSkill, len(recs))
	for _, r := range recs {
		byName[r.Name] = r
	}
	// skills_dir as it is now, not as the last snapshot saw it: a skill the
	// owner just wrote shows as not installed.
	cat, loadProbs := skills.Load(a.d.SkillsDir, bundled.FS())
	out := []SkillView{}
	seen := map[string]bool{}
	for _, name := range cat.Names() {
		e, _ := cat.Get(name)
		sk := e.Skill
		v := SkillView{Name: name, Version: sk.Version, Description: sk.Description, Activation: string(sk.Activation),
			Origin: string(e.Origin), Dir: e.Dir, Hash: sk.Hash(), Status: "not_installed", Scripts: []string{}}
		for _, sc := range sk.Scripts() {
			v.Scripts = append(v.Scripts, sc.Path)
		}
		if r, ok := byName[name]; ok {
			seen[name] = true
			at := r.InstalledAt
			v.Source, v.InstalledHash, v.InstalledAt, v.ApprovalTokenID, v.Status = string(r.Source), r.Hash, &at, r.ApprovalTokenID, "installed"
			if err := a.verifySkill(ctx, e, r); err != nil {
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
		out = append(out, SkillView{Name: r.Name, Version: r.Version, Hash: r.Hash, Status: "missing", Source: string(r.Source),
			InstalledHash: r.Hash, InstalledAt: &at, ApprovalTokenID: r.ApprovalTokenID, Scripts: []string{},
			Problem: "installed, but its files do not load from skills_dir; see the daemon's log, or remove it with `silas skills remove " + r.Name + "`"})
	}
	slices.SortFunc(out, func(x, y SkillView) int { return strings.Compare(x.Name, y.Name) })
	probs := []SkillProblemView{}
	for _, p := range loadProbs {
		probs = append(probs, SkillProblemView{Name: p.Name, Origin: string(p.Origin), Dir: p.Dir, Error: p.Err.Error()})
	}
	return out, probs, cat, nil
}

// verifySkill checks a skill's files as they are now against its record: a
// local skill is read from disk again, a bundled one is the binary's.
func (a *API) verifySkill(ctx context.Context, e skills.Entry, r persistence.InstalledSkill) error {
	if e.Origin != skills.OriginLocal {
		return r.Check(e.Skill.Manifest())
	}
	root, err := os.OpenRoot(e.Dir)
	if err != nil {
		return err
	}
	defer func() { _ = root.Close() }()
	return a.d.DB.Skills().Verify(ctx, r.Name, root.FS())
}

// pendingSkillCards are the skill_install cards waiting for the owner, for
// GET /approvals/pending.
func pendingSkillCards(ctx context.Context, sys Actors) []any {
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
