package ownerapi

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttputil"

	"github.com/silas-ai/silas/actors"
	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/persistence"
	"github.com/silas-ai/silas/runtime/session"
)

const (
	testOwnerToken = "owner-token-0123456789abcdef"
	testOwnerID    = "owner"
)

// fakeActors stands for the actor system: it answers what a test set and
// records what the handlers asked.
type fakeActors struct {
	mu sync.Mutex

	approvals    []messages.ApprovalRequestEvent
	approvalsErr error
	skillPending []messages.SkillInstallRequestEvent
	skillRecent  []actors.SkillInstallOutcome
	skillReqErr  error
	install      *actors.SkillInstallAnswer
	installErr   error
	remove       *actors.SkillRemoveAnswer
	removeErr    error
	conns        []messages.ConnectionSummary
	connsErr     error
	propose      messages.ConnectionSummary
	proposeErr   error
	connErr      error // CheckConnection and RemoveConnection
	persona      messages.PersonaView
	personaErr   error

	calls     []string // every method called, in order
	installs  []actors.InstallSkill
	proposals []actors.ProposeConnection
	personaOp []personaCall
	stored    []string
}

type personaCall struct {
	scope string
	kind  messages.ScopeKind
	op    actors.PersonaOp
}

var _ Actors = (*fakeActors)(nil)

// called records a call and locks f until the returned unlock.
func (f *fakeActors) called(name string) (unlock func()) {
	f.mu.Lock()
	f.calls = append(f.calls, name)
	return f.mu.Unlock
}

// set changes what f answers, between requests.
func (f *fakeActors) set(fn func(f *fakeActors)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

// Calls returns the methods called so far.
func (f *fakeActors) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func (f *fakeActors) PendingApprovals(context.Context, string) ([]messages.ApprovalRequestEvent, error) {
	defer f.called("PendingApprovals")()
	return f.approvals, f.approvalsErr
}

func (f *fakeActors) SkillRequests(context.Context) ([]messages.SkillInstallRequestEvent, []actors.SkillInstallOutcome, error) {
	defer f.called("SkillRequests")()
	return f.skillPending, f.skillRecent, f.skillReqErr
}

func (f *fakeActors) InstallSkill(_ context.Context, req actors.InstallSkill) (*actors.SkillInstallAnswer, error) {
	defer f.called("InstallSkill")()
	f.installs = append(f.installs, req)
	return f.install, f.installErr
}

func (f *fakeActors) RemoveSkill(context.Context, string) (*actors.SkillRemoveAnswer, error) {
	defer f.called("RemoveSkill")()
	return f.remove, f.removeErr
}

func (f *fakeActors) Connections(context.Context) ([]messages.ConnectionSummary, error) {
	defer f.called("Connections")()
	return f.conns, f.connsErr
}

func (f *fakeActors) ProposeConnection(_ context.Context, p actors.ProposeConnection) (messages.ConnectionSummary, error) {
	defer f.called("ProposeConnection")()
	f.proposals = append(f.proposals, p)
	return f.propose, f.proposeErr
}

func (f *fakeActors) CheckConnection(_ context.Context, id string) (messages.ConnectionSummary, error) {
	defer f.called("CheckConnection " + id)()
	return messages.ConnectionSummary{ConnectionID: id}, f.connErr
}

func (f *fakeActors) RemoveConnection(_ context.Context, id string) (messages.ConnectionSummary, error) {
	defer f.called("RemoveConnection " + id)()
	return messages.ConnectionSummary{ConnectionID: id}, f.connErr
}

func (f *fakeActors) Persona(_ context.Context, scope string, kind messages.ScopeKind, op actors.PersonaOp) (messages.PersonaView, error) {
	defer f.called("Persona")()
	f.personaOp = append(f.personaOp, personaCall{scope: scope, kind: kind, op: op})
	v := f.persona
	v.ScopeID = scope
	return v, f.personaErr
}

func (f *fakeActors) SecretStored(ref string) {
	defer f.called("SecretStored")()
	f.stored = append(f.stored, ref)
}

// fakeVault records the values it is given.
type fakeVault struct {
	mu     sync.Mutex
	err    error
	values map[string]string
}

func (v *fakeVault) Fulfil(_ context.Context, ref string, value []byte) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.err != nil {
		return v.err
	}
	if v.values == nil {
		v.values = map[string]string{}
	}
	v.values[ref] = string(value)
	return nil
}

func (v *fakeVault) value(ref string) (string, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	s, ok := v.values[ref]
	return s, ok
}

// harness serves an API over an in-memory listener, routed the way the
// web channel routes Extra (longest matching prefix of the method).
type harness struct {
	t        *testing.T
	api      *API
	db       *persistence.DB
	actors   *fakeActors
	vault    *fakeVault
	sessions *session.Minter
	// customer is a valid chatbot customer session token (scope "cust-1").
	customer string
	client   *fasthttp.Client
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	ctx := context.Background()
	db, err := persistence.Open(ctx, persistence.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	minter, err := session.NewMinter(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	reg, err := NewDeviceRegistry(ctx, db, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, db: db, actors: &fakeActors{}, vault: &fakeVault{}, sessions: minter,
		customer: minter.Mint("cust-1", time.Now().Add(time.Hour))}
	h.api, err = New(Deps{DB: db, OwnerToken: testOwnerToken, OwnerID: testOwnerID, Sessions: minter,
		Devices: reg, Vault: h.vault, Actors: h.actors, SkillsDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ln := fasthttputil.NewInmemoryListener()
	srv := &fasthttp.Server{Handler: route(h.api.Routes())}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	t.Cleanup(func() {
		// Shutdown misses a Serve that has not registered the listener
		// yet; closing the listener ends that one too.
		_ = srv.Shutdown()
		_ = ln.Close()
		<-done
	})
	h.client = &fasthttp.Client{Dial: func(string) (net.Conn, error) { return ln.Dial() }}
	return h
}

// route dispatches like channels/web: the longest prefix of the request's
// method wins; nothing matching is a plain 404.
func route(routes map[string]fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		best, bestLen := fasthttp.RequestHandler(nil), -1
		for k, h := range routes {
			method, prefix, _ := strings.Cut(k, " ")
			if method == string(ctx.Method()) && strings.HasPrefix(string(ctx.Path()), prefix) && len(prefix) > bestLen {
				best, bestLen = h, len(prefix)
			}
		}
		if best == nil {
			ctx.SetStatusCode(fasthttp.StatusNotFound)
			ctx.SetBodyString("no route")
			return
		}
		best(ctx)
	}
}

// reply is one HTTP answer.
type reply struct {
	status       int
	body         []byte
	contentType  string
	cacheControl string
	header       map[string]string
}

// do sends method path with the bearer token (none when empty) and body
// (none when empty).
func (h *harness) do(method, path, token, body string) reply {
	h.t.Helper()
	return h.doHeader(method, path, body, map[string]string{"Authorization": bearer(token)})
}

func bearer(token string) string {
	if token == "" {
		return ""
	}
	return "Bearer " + token
}

func (h *harness) doHeader(method, path, body string, header map[string]string) reply {
	h.t.Helper()
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.Header.SetMethod(method)
	req.SetRequestURI("http://silas.test" + path)
	for k, v := range header {
		if v != "" {
			req.Header.Set(k, v)
		}
	}
	if body != "" {
		req.Header.SetContentType("application/json")
		req.SetBodyString(body)
	}
	if err := h.client.DoTimeout(req, resp, 30*time.Second); err != nil {
		h.t.Fatalf("%s %s: %v", method, path, err)
	}
	r := reply{status: resp.StatusCode(), body: append([]byte(nil), resp.Body()...),
		contentType: string(resp.Header.ContentType()), cacheControl: string(resp.Header.Peek("Cache-Control")),
		header: map[string]string{}}
	for k, v := range resp.Header.All() {
		r.header[string(k)] = string(v)
	}
	return r
}

// owner sends as the owner.
func (h *harness) owner(method, path, body string) reply {
	h.t.Helper()
	return h.do(method, path, testOwnerToken, body)
}

// wantError checks that r is the web channel's error event with status,
// code and, unless empty, exactly msg.
func wantError(t *testing.T, r reply, status int, code messages.Code, msg string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d; body %s", r.status, status, r.body)
	}
	if r.contentType != "application/json" {
		t.Errorf("content type %q, want application/json", r.contentType)
	}
	var e messages.ErrorEvent
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		t.Fatalf("body %s is not an error event: %v", r.body, err)
	}
	if e.Type != "error" || e.Code != code {
		t.Errorf("error event %+v, want code %q", e, code)
	}
	if msg != "" && e.Message != msg {
		t.Errorf("message %q,\nwant    %q", e.Message, msg)
	}
}

// wantErrorContains is wantError with a message fragment.
func wantErrorContains(t *testing.T, r reply, status int, code messages.Code, part string) {
	t.Helper()
	wantError(t, r, status, code, "")
	var e messages.ErrorEvent
	_ = json.Unmarshal(r.body, &e)
	if !strings.Contains(e.Message, part) {
		t.Errorf("message %q does not contain %q", e.Message, part)
	}
}

// decode decodes r's body into v, failing on a status other than want.
func decode(t *testing.T, r reply, want int, v any) {
	t.Helper()
	if r.status != want {
		t.Fatalf("status %d, want %d; body %s", r.status, want, r.body)
	}
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
}

// auditEvents returns the events of the audit chain, oldest first.
func (h *harness) auditEvents() []persistence.AuditEntry {
	h.t.Helper()
	ctx := context.Background()
	head, _, err := h.db.Audit().Head(ctx)
	if err != nil {
		h.t.Fatal(err)
	}
	if head == 0 {
		return nil
	}
	entries, err := h.db.Audit().Range(ctx, 1, int(head))
	if err != nil {
		h.t.Fatal(err)
	}
	return entries
}
