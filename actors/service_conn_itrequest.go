package actors

import (
	"fmt"
	"strings"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/google/uuid"

	"github.com/silas-ai/silas/messages"
)

// Recovery actions that draft an IT request (spec 5.10.4): the connection
// asks the owner's scope to plan, approve and run a work item that writes
// the request; nothing is sent.
const (
	actionDraftITRequest       = "draft_it_request"
	actionRequestAdminApproval = "request_admin_approval"
)

// itRequestFile is what the drafted request is written to.
const itRequestFile = "it-request.md"

// itRequestWork is the work item that drafts the IT request for a
// connection a policy blocked: the app registration details, the
// permissions and why, and the admin consent link when the settings give
// one. It goes through the owner's normal plan -> approve -> execute path.
func itRequestWork(rec messages.Connection, f *messages.ConnectionFailure) *messages.WorkItem {
	id := "task-it-request-" + strings.ReplaceAll(uuid.NewString(), "-", "")[:12]
	w := messages.NewWorkItem(id, messages.WorkTask, "Draft an IT request for "+rec.Name)
	var b strings.Builder
	fmt.Fprintf(&b, "The owner's organisation blocks Silas from connecting to %s: %s\n\n", f.Service, f.Message)
	fmt.Fprintf(&b, "Write %s: a short, polite email to the IT administrators asking them to approve the app, with:\n", itRequestFile)
	if id, ok := rec.Settings["client_id"].(string); ok && id != "" {
		fmt.Fprintf(&b, "- the app registration: client ID %s\n", id)
	}
	if rec.AuthStrategy == messages.AuthBrowserRedirect {
		fmt.Fprintf(&b, "- the redirect URI: http://127.0.0.1/callback (any port, a native app on the owner's machine)\n")
	}
	perms := rec.InitialPermissions
	if len(perms) == 0 {
		perms = rec.PermissionsAvailable
	}
	if len(perms) > 0 {
		fmt.Fprintf(&b, "- the permissions requested, each with one line on why the owner needs it: %s\n", strings.Join(perms, ", "))
	}
	if u, ok := rec.Settings["admin_consent_url"].(string); ok && u != "" {
		fmt.Fprintf(&b, "- the link where an administrator grants consent: %s\n", u)
	}
	b.WriteString("\nDo not send anything: the owner reviews the draft and sends it.\n")
	w.Body = b.String()
	zero := 0
	w.Verify = []messages.VerificationCheck{{Name: "draft written", Run: "test -s " + itRequestFile, Expect: messages.Expectation{ExitCode: &zero}, Timeout: 30}}
	return w
}

// draftITRequest asks the owner scope to plan the IT request.
func (s *ServiceConnection) draftITRequest(c actor.Context, f *messages.ConnectionFailure) {
	s.itRequest = itRequestWork(s.rec, f)
	s.audit("it_request_proposed", map[string]any{"work_item_id": s.itRequest.ID})
	c.Request(s.d.stream, &messages.ScopeFor{ScopeID: s.d.Config.OwnerID, Kind: messages.ScopeOwner})
}

// onOwnerScope hands the IT request to the owner scope, which puts its
// plan card to the owner.
func (s *ServiceConnection) onOwnerScope(c actor.Context, m *messages.ScopeRef) {
	if s.itRequest == nil || m.PID == nil || m.ScopeID != s.d.Config.OwnerID {
		return
	}
	c.Request(m.PID, &ownerWork{work: s.itRequest})
}

// onITVerdict tells the owner when the request could not be asked.
func (s *ServiceConnection) onITVerdict(c actor.Context, v *ownerVerdict) {
	if s.itRequest == nil || v.workID != s.itRequest.ID {
		return
	}
	s.itRequest = nil
	detail := ""
	switch {
	case v.approved:
		return
	case v.busy:
		detail = "another approval is waiting for you; answer it, then choose Draft IT request again"
	case v.reason != "":
		detail = "the IT request was not drafted: " + v.reason
	default:
		return // declined: the owner saw the plan card
	}
	s.toOwner(c, &messages.ConnectionStatusEvent{Type: messages.EventConnectionStatus, ConnectionID: s.rec.ConnectionID, Name: s.rec.Name, Status: s.rec.Status, Detail: detail})
}
