package ownerapi

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/silas-ai/silas/actors"
	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/skills"
)

func TestSkillsBadInput(t *testing.T) {
	h := newHarness(t)
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		code                     messages.Code
		msg                      string
	}{
		{"install: empty body", "POST", "/skills/install", ``, 400, messages.CodeBadRequest, "the body is empty; send a JSON object"},
		{"install: body too large", "POST", "/skills/install", `{"dir":"/` + strings.Repeat("d", maxSkillBody) + `"}`, 400, messages.CodeBadRequest,
			fmt.Sprintf("the body is %d bytes; the limit is %d", maxSkillBody+11, maxSkillBody)},
		{"install: unknown field", "POST", "/skills/install", `{"dir":"/x","format":"claude"}`, 400, messages.CodeBadRequest,
			`the body must be a JSON object of the documented fields: json: unknown field "format"`},
		{"install: no dir", "POST", "/skills/install", `{"dir":"  "}`, 400, messages.CodeBadRequest, `give the skill's directory: {"dir":"/path/to/skill"}`},
		{"install: relative dir", "POST", "/skills/install", `{"dir":"my-skill"}`, 400, messages.CodeBadRequest,
			`dir "my-skill" is relative; give an absolute path (the daemon does not share your working directory)`},
		{"install: a URL", "POST", "/skills/install", `{"dir":"https://example.com/skill.git"}`, 400, messages.CodeBadRequest, skills.ErrRemoteSource.Error()},
		{"install: an scp-style remote", "POST", "/skills/install", `{"dir":"git@example.com:me/skill"}`, 400, messages.CodeBadRequest, skills.ErrRemoteSource.Error()},
		{"install: longer path", "POST", "/skills/installx", `{"dir":"/x"}`, 404, messages.CodeNotFound, "no such endpoint"},
		{"import: bad format", "POST", "/skills/import", `{"dir":"/x","format":"word"}`, 400, messages.CodeBadRequest,
			`format "word": want silas, openai, claude or openclaw, or leave it out to detect it`},
		{"import: relative dir", "POST", "/skills/import", `{"dir":"./x"}`, 400, messages.CodeBadRequest,
			`dir "./x" is relative; give an absolute path (the daemon does not share your working directory)`},
		{"import: longer path", "POST", "/skills/import/", `{"dir":"/x"}`, 404, messages.CodeNotFound, "no such endpoint"},
		{"list: longer path", "GET", "/skillsx", ``, 404, messages.CodeNotFound, "no such endpoint"},
		{"show: no name", "GET", "/skills/", ``, 404, messages.CodeNotFound, "no such endpoint; show a skill with GET /skills/{name}"},
		{"show: nested", "GET", "/skills/a/b", ``, 404, messages.CodeNotFound, "no such endpoint; show a skill with GET /skills/{name}"},
		{"show: unknown", "GET", "/skills/nope", ``, 404, messages.CodeNotFound, `no skill "nope": list them with ` + "`silas skills list`"},
		{"remove: no name", "DELETE", "/skills/", ``, 404, messages.CodeNotFound, "no such endpoint; remove a skill with DELETE /skills/{name}"},
		{"remove: nested", "DELETE", "/skills/a/b", ``, 404, messages.CodeNotFound, "no such endpoint; remove a skill with DELETE /skills/{name}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, h.owner(tc.method, tc.path, tc.body), tc.status, tc.code, tc.msg)
		})
	}
	for _, c := range h.actors.Calls() {
		if c == "InstallSkill" || c == "RemoveSkill" {
			t.Fatalf("bad input reached the SkillInstaller: %v", h.actors.Calls())
		}
	}
}

// Each SkillInstaller refusal has its status and code, carries the
// reports, and is the same whether the call or the answer failed.
func TestSkillRefusals(t *testing.T) {
	h := newHarness(t)
	report := &skills.ValidationReport{}
	for _, tc := range []struct {
		err    error
		status int
		code   messages.Code
	}{
		{fmt.Errorf("%w: SKILL.md has no name", actors.ErrSkillInvalid), 422, codeValidationFailed},
		{fmt.Errorf("%w: no SKILL.md", skills.ErrImport), 400, messages.CodeBadRequest},
		{actors.ErrSkillBusy, 409, codeConflict},
		{actors.ErrSkillUnchanged, 409, codeConflict},
		{actors.ErrSkillBundled, 403, messages.CodeForbidden},
		{actors.ErrSkillNotInstalled, 404, messages.CodeNotFound},
		{actors.ErrSkillsUnavailable, 503, messages.CodeUnavailable},
		{errors.New("open /x: /x is not a directory"), 400, messages.CodeBadRequest},
		{errors.New("mailbox full"), 500, messages.CodeInternal},
	} {
		t.Run(tc.err.Error(), func(t *testing.T) {
			for _, viaAnswer := range []bool{false, true} {
				h.actors.set(func(f *fakeActors) {
					f.install, f.installErr = &actors.SkillInstallAnswer{Report: report}, tc.err
					if viaAnswer {
						f.install.Err, f.installErr = tc.err, nil
					}
				})
				r := h.owner("POST", "/skills/install", `{"dir":"/tmp/skill"}`)
				var ref SkillRefusal
				decode(t, r, tc.status, &ref)
				if ref.Type != "error" || ref.Code != tc.code || ref.Message != tc.err.Error() || ref.ValidationReport == nil {
					t.Errorf("refusal %s, want code %s with the error and the report", r.body, tc.code)
				}
			}
			h.actors.set(func(f *fakeActors) { f.remove, f.removeErr = &actors.SkillRemoveAnswer{Err: tc.err}, nil })
			r := h.owner("DELETE", "/skills/some-skill", "")
			wantError(t, r, tc.status, tc.code, tc.err.Error())
			if strings.Contains(string(r.body), "validation_report") {
				t.Errorf("a removal refusal carries a report: %s", r.body)
			}
		})
	}
}

func TestSkillInstallAccepted(t *testing.T) {
	h := newHarness(t)
	exp := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	h.actors.set(func(f *fakeActors) {
		f.install = &actors.SkillInstallAnswer{RequestID: "req-1", Name: "word-count", Hash: "abc", ExpiresAt: exp}
	})
	var v SkillRequestView
	decode(t, h.owner("POST", "/skills/import", `{"dir":"/src/wc","format":"claude","name":"word-count"}`), 202, &v)
	if v.RequestID != "req-1" || v.Skill != "word-count" || v.ExpiresAt == nil || !v.ExpiresAt.Equal(exp) ||
		!strings.Contains(v.Message, "approve or decline its card") {
		t.Fatalf("accepted %+v", v)
	}
	h.actors.mu.Lock()
	got := h.actors.installs
	h.actors.mu.Unlock()
	if len(got) != 1 || !got[0].Import || got[0].Dir != "/src/wc" || got[0].FormatHint != skills.FormatClaude || got[0].Name != "word-count" {
		t.Fatalf("asked the installer %+v", got)
	}
	h.actors.set(func(f *fakeActors) { f.remove = &actors.SkillRemoveAnswer{Name: "word-count", Hash: "abc"} })
	var rm SkillRemoved
	decode(t, h.owner("DELETE", "/skills/word-count", ""), 200, &rm)
	if rm.Removed != "word-count" || rm.Hash != "abc" {
		t.Fatalf("removed %+v", rm)
	}
}

// The bundled skills list and show without any install record, and the
// pending cards the SkillInstaller reports are listed.
func TestSkillsListAndShow(t *testing.T) {
	h := newHarness(t)
	exp := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	h.actors.set(func(f *fakeActors) {
		f.skillPending = []messages.SkillInstallRequestEvent{{Type: "approval_request", RequestID: "req-9", ExpiresAt: exp}}
	})
	var list SkillsResponse
	decode(t, h.owner("GET", "/skills", ""), 200, &list)
	if len(list.Skills) == 0 || list.Problems == nil || list.Recent == nil {
		t.Fatalf("list %s", mustJSON(list))
	}
	var coding *SkillView
	for i, s := range list.Skills {
		if s.Name == "coding" {
			coding = &list.Skills[i]
		}
	}
	if coding == nil || coding.Origin != "bundled" || coding.Status != "not_installed" || coding.Hash == "" {
		t.Fatalf("bundled skill coding: %+v", coding)
	}
	if len(list.Pending) != 1 || list.Pending[0].RequestID != "req-9" || !list.Pending[0].ExpiresAt.Equal(exp) {
		t.Fatalf("pending %+v", list.Pending)
	}
	var d SkillDetail
	decode(t, h.owner("GET", "/skills/coding", ""), 200, &d)
	if d.Name != "coding" || d.Instructions == "" || len(d.Files) == 0 || d.Files[0].SHA256 == "" {
		t.Fatalf("show coding: %s", mustJSON(d))
	}
}
