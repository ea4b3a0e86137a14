package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/silas-ai/silas/bench/mockllm"
	"github.com/silas-ai/silas/channels/web"
	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/persistence"
)

// The PWA tests drive the real app (spec 8.2) in headless Chromium against
// a real daemon whose models are the mock. They wait on DOM conditions in
// the page (chromedp.Poll, WaitVisible) under a deadline, never on sleeps.
//
// Screenshots go to $PWA_SCREENSHOTS if set (the README's come from
// `PWA_SCREENSHOTS=$PWD/docs/screenshots`), else to a temporary folder.

const (
	chromiumPath = "/usr/bin/chromium"
	pwaToken     = "owner-secret-token" // overrides() sets it as the owner token
	pwaStep      = 20 * time.Second     // deadline of one browser step
)

// pwaAnswer is the proxy's direct answer: markdown, and raw HTML that must
// stay text.
const pwaAnswer = "**Hello** from Silas.\n\n- first\n- second\n\n<img src=x data-injected=1> stays text"

// networkPlan is helloPlan with a check that needs the network, which makes
// the plan high risk.
var networkPlan = strings.Replace(helloPlan, "expect: { exit_code: 0 }", "expect: { exit_code: 0 }\n    network: true", 1)

// scriptPWA makes the proxy answer directly, except for messages asking for
// hello.txt, which go to the planner proposing plan; the executor writes
// hello.txt.
func scriptPWA(mock *mockllm.Server, plan string) { mock.HandleReply(pwaReplies(plan)) }

// pwaReplies is scriptPWA's script.
func pwaReplies(plan string) mockllm.ReplyFunc {
	return func(r *mockllm.RecordedRequest) (mockllm.Reply, bool) {
		switch r.Schema {
		case "RouteDecision":
			msg := currentMessage(r)
			switch {
			case strings.Contains(msg, "hello.txt"):
				return mockllm.Reply{Content: routeDecision("planner", "")}, true
			case strings.Contains(msg, "while offline"):
				return mockllm.Reply{Content: routeDecision("direct", "Got the note you wrote offline.")}, true
			}
			return mockllm.Reply{Content: routeDecision("direct", pwaAnswer)}, true
		case "AgentResponse":
			return mockllm.Reply{Content: planReply(plan)}, true
		case "ExecutorAgentOutput":
			if n := len(r.Messages); n > 0 && r.Messages[n-1].Role == "tool" {
				return mockllm.Reply{Content: `{"summary":"wrote hello.txt","artifact_refs":["hello.txt"],"next_steps":[]}`}, true
			}
			return mockllm.Reply{ToolCalls: []mockllm.ToolCall{{ID: "call-1", Name: "shell_exec", Arguments: `{"command":"echo hi > hello.txt"}`}}}, true
		}
		return mockllm.Reply{}, false
	}
}

// pwa is one headless Chromium tab showing the app.
type pwa struct {
	t      *testing.T
	ctx    context.Context
	base   string
	name   string // viewport, for screenshot names: "375x812"
	mobile bool

	mu       sync.Mutex
	problems []string
}

// openPWA starts Chromium at width x height on the daemon at addr. Uncaught
// exceptions and console errors (a CSP violation among them) fail the test.
func openPWA(t *testing.T, addr string, width, height int) *pwa {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Fatalf("the PWA tests need headless Chromium at %s: install it with `apt-get install -y chromium` (.ci/run installs it when missing): %v", chromiumPath, err)
	}
	started := time.Now()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath), chromedp.WindowSize(width, height),
		chromedp.UserDataDir(t.TempDir()), chromedp.Flag("disable-dev-shm-usage", true))
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium refuses to run as root with its sandbox
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancelTab(); cancelAlloc() })
	p := &pwa{t: t, ctx: ctx, base: "http://" + addr, name: fmt.Sprintf("%dx%d", width, height), mobile: width < 1024}

	emulate := []chromedp.EmulateViewportOption{chromedp.EmulateScale(1)}
	if p.mobile {
		emulate = []chromedp.EmulateViewportOption{chromedp.EmulateScale(2), chromedp.EmulateMobile, chromedp.EmulatePortrait}
	}
	// The first Do starts the browser on ctx itself: a deadline on it
	// would end the browser when the deadline passes.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(int64(width), int64(height), emulate...)); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	if _, err := chromedp.Call(ctx, cdplog.Enable, cdp.Empty{}); err != nil {
		t.Fatalf("enable the browser log: %v", err)
	}
	exceptions := chromedp.Events(ctx, runtime.ExceptionThrown)
	entries := chromedp.Events(ctx, cdplog.EntryAdded)
	go func() {
		for ev, err := range exceptions {
			if err != nil {
				return
			}
			p.problem("uncaught exception: " + exceptionText(ev.ExceptionDetails))
		}
	}()
	go func() {
		for ev, err := range entries {
			if err != nil {
				return
			}
			if e := ev.Entry; e.Level == cdplog.EntryLevelError && !expectedLogError(e) {
				p.problem(fmt.Sprintf("console %s error: %s (%s)", e.Source, e.Text, e.URL))
			}
		}
	}()
	t.Cleanup(func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, s := range p.problems {
			t.Errorf("browser: %s", s)
		}
	})
	p.do("open the app", chromedp.Navigate(p.base+"/"))
	t.Logf("Chromium %s up in %v", p.name, time.Since(started).Round(time.Millisecond))
	return p
}

// expectedLogError tells the errors a reconnecting app causes by design:
// failed WebSocket dials while the daemon is down.
func expectedLogError(e *cdplog.Entry) bool {
	return e.Source == cdplog.EntrySourceNetwork || strings.Contains(e.Text, "WebSocket connection to") ||
		strings.Contains(e.Text, "ERR_CONNECTION_REFUSED")
}

func exceptionText(d *runtime.ExceptionDetails) string {
	if d == nil {
		return "?"
	}
	s := d.Text
	if d.Exception != nil && d.Exception.Description != "" {
		s += " " + d.Exception.Description
	}
	return fmt.Sprintf("%s at %s:%d", s, d.URL, d.LineNumber+1)
}

func (p *pwa) problem(s string) {
	p.mu.Lock()
	p.problems = append(p.problems, s)
	p.mu.Unlock()
}

// do runs browser steps under one step deadline.
func (p *pwa) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, pwaStep)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		p.t.Fatalf("%s: %v", what, err)
	}
}

// waitFor waits until the JavaScript expression is truthy in the page.
func (p *pwa) waitFor(what, expr string) {
	p.t.Helper()
	p.do("wait for "+what, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(pwaStep)))
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](p *pwa, expr string) T {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, pwaStep)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		p.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// js quotes s as a JavaScript string literal.
func js(s string) string { return strconv.Quote(s) }

// hasText is a JavaScript predicate: a visible element matching sel holds text.
func hasText(sel, text string) string {
	return fmt.Sprintf(`[...document.querySelectorAll(%s)].some((e) => e.getClientRects().length > 0 && e.textContent.includes(%s))`, js(sel), js(text))
}

func (p *pwa) login() {
	p.t.Helper()
	p.do("log in",
		chromedp.WaitVisible(chromedp.CSS("#token")),
		chromedp.SendKeys(chromedp.CSS("#token"), pwaToken),
		chromedp.Click(chromedp.CSS("#login-form button[type=submit]")))
	p.waitFor("the connection", `document.querySelector('#conn').dataset.state === 'online'`)
	if eval[bool](p, `location.href.includes(`+js(pwaToken)+`)`) {
		p.t.Fatal("the token is in the URL")
	}
}

// say types a message in the composer and sends it with Enter.
func (p *pwa) say(text string) {
	p.t.Helper()
	p.tab("stream")
	p.do("say "+text, chromedp.SendKeys(chromedp.CSS("#say"), text), chromedp.KeyEvent(kb.Enter))
	p.waitFor("the message in the stream", hasText(".msg-user .bubble", text))
}

// tab shows a surface: a tab on a phone; on a desktop Stream and Review are
// always there and Activity is a slide-over.
func (p *pwa) tab(name string) {
	p.t.Helper()
	switch {
	case p.mobile:
		p.do("open the "+name+" tab", chromedp.Click(chromedp.CSS("#tab-"+name)))
	case name == "activity":
		if !eval[bool](p, `document.querySelector('#app').classList.contains('activity-open')`) {
			p.do("open Activity", chromedp.Click(chromedp.CSS("#activity-toggle")))
		}
	default:
		if eval[bool](p, `document.querySelector('#app').classList.contains('activity-open')`) {
			p.do("close Activity", chromedp.Click(chromedp.CSS("#activity-close")))
		}
	}
	p.waitFor(name+" on screen", fmt.Sprintf(`(() => { const r = document.querySelector('#%s').getBoundingClientRect(); return r.width > 0 && r.left < innerWidth && r.right <= innerWidth + 1; })()`, name))
}

// screenshot saves the viewport as <viewport>-<name>.png.
func (p *pwa) screenshot(name string) {
	p.t.Helper()
	// Let the slide-over's transition finish: its end is a DOM condition.
	p.waitFor("animations to end", `document.getAnimations().every((a) => a.playState !== 'running')`)
	ctx, cancel := context.WithTimeout(p.ctx, pwaStep)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		p.t.Fatalf("screenshot %s: %v", name, err)
	}
	dir := os.Getenv("PWA_SCREENSHOTS")
	if dir == "" {
		dir = screenshotDir(p.t)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		p.t.Fatal(err)
	}
	path := filepath.Join(dir, p.name+"-"+name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		p.t.Fatal(err)
	}
	p.t.Logf("screenshot %s", path)
}

var shotDirs sync.Map // test name -> its temporary screenshot folder

func screenshotDir(t *testing.T) string {
	if d, ok := shotDirs.Load(t.Name()); ok {
		return d.(string)
	}
	d := t.TempDir()
	shotDirs.Store(t.Name(), d)
	return d
}

// responses watches the page's HTTP responses to path and returns a func
// that waits until n of them succeeded.
func (p *pwa) responses(path string) func(n int) {
	p.t.Helper()
	p.enableNetwork()
	events := chromedp.Events(p.ctx, network.ResponseReceived)
	ok := make(chan struct{})
	go func() {
		for ev, err := range events {
			if err != nil {
				return
			}
			if strings.HasSuffix(ev.Response.URL, path) && ev.Response.Status == 200 {
				select {
				case ok <- struct{}{}:
				case <-p.ctx.Done():
					return
				}
			}
		}
	}()
	return func(n int) {
		p.t.Helper()
		deadline := time.After(pwaStep)
		for i := 0; i < n; i++ {
			select {
			case <-ok:
			case <-deadline:
				p.t.Fatalf("%d of %d successful responses to %s within %v", i, n, path, pwaStep)
			}
		}
	}
}

func (p *pwa) enableNetwork() {
	p.t.Helper()
	if _, err := chromedp.Call(p.ctx, network.Enable, network.EnableParams{}); err != nil {
		p.t.Fatalf("enable network events: %v", err)
	}
}

// wsSent records the text frames the page sends on its WebSockets; the
// returned func waits for one containing want and returns them all.
func (p *pwa) wsSent() func(want string) []string {
	p.t.Helper()
	p.enableNetwork()
	events := chromedp.Events(p.ctx, network.WebSocketFrameSent)
	frames := make(chan string)
	go func() {
		for ev, err := range events {
			if err != nil {
				return
			}
			select {
			case frames <- string(ev.Response.PayloadData):
			case <-p.ctx.Done():
				return
			}
		}
	}()
	var seen []string
	return func(want string) []string {
		p.t.Helper()
		deadline := time.After(pwaStep)
		for {
			select {
			case f := <-frames:
				seen = append(seen, f)
				if strings.Contains(f, want) {
					return seen
				}
			case <-deadline:
				p.t.Fatalf("no WebSocket frame with %q within %v; sent %q", want, pwaStep, seen)
			}
		}
	}
}

// card returns a selector of the active Review card of kind.
func card(kind string) string { return ".review-root > .card.kind-" + kind }

// rect returns the page coordinates of the first element matching sel.
func (p *pwa) rect(sel string) (x, y, w, h float64) {
	p.t.Helper()
	r := eval[[]float64](p, fmt.Sprintf(`(() => { const r = document.querySelector(%s).getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; })()`, js(sel)))
	return r[0], r[1], r[2], r[3]
}

// startPWADaemon starts a daemon with the PWA script; port 0 picks one.
func startPWADaemon(t *testing.T, mock *mockllm.Server, dir string, port int) *testDaemon {
	t.Helper()
	ov := overrides(t, mock, dir)
	ov["silas.channels.web.port"] = port
	return startTest(t, loadConfig(t, ov))
}

func TestPWALayouts(t *testing.T) {
	for _, size := range []struct{ w, h int }{{375, 812}, {1440, 900}} {
		t.Run(fmt.Sprintf("%dx%d", size.w, size.h), func(t *testing.T) {
			started := time.Now()
			mock := newMock(t)
			scriptPWA(mock, helloPlan)
			d := startPWADaemon(t, mock, t.TempDir(), 0)
			p := openPWA(t, d.Addr(), size.w, size.h)
			p.login()

			p.say("hi Silas")
			p.waitFor("the markdown answer", `[...document.querySelectorAll('.msg-silas strong')].some((e) => e.textContent === 'Hello')`)
			if n := eval[int](p, `document.querySelectorAll('.msg-silas li').length`); n != 2 {
				t.Errorf("answer list has %d items, want 2", n)
			}
			if eval[bool](p, `!!document.querySelector('.msg-silas img, [data-injected]')`) || !eval[bool](p, hasText(".msg-silas", "<img src=x data-injected=1> stays text")) {
				t.Error("raw HTML in the model's answer was not shown as text")
			}
			p.waitFor("the message delivered", `document.querySelector('.msg-user').dataset.state === 'delivered'`)
			if !eval[bool](p, hasText(".msg-silas .register", "status")) {
				t.Error("the answer has no register/mode label")
			}

			p.say("please write hello.txt")
			p.waitFor("the review badge", `document.querySelector('#review-badge').textContent === '1'`)
			if p.mobile && eval[bool](p, `document.querySelector('#review').getClientRects().length > 0`) {
				t.Error("on a phone, Review shows while the Stream tab is active")
			}
			if !p.mobile && !eval[bool](p, `document.querySelector('#review').getClientRects().length > 0 && document.querySelector('.tabs').getClientRects().length === 0`) {
				t.Error("on a desktop, Review is not beside the Stream (or the tabs show)")
			}
			p.screenshot("stream")

			p.tab("review")
			p.waitFor("the plan card", hasText(card("plan")+" .intent", "Write hello.txt"))
			if p.mobile {
				if h := eval[float64](p, `document.querySelector('.card-body').getBoundingClientRect().height`); h > 300 {
					t.Errorf("card body is %.0f px high at 375 px wide; the card contract allows 300", h)
				}
			}
			p.screenshot("review")

			p.tab("activity")
			p.waitFor("the activity timeline", `document.querySelectorAll('.activity-item').length > 0 || document.querySelector('#activity-status').textContent !== 'Loading…' && document.querySelector('#activity-status').textContent !== ''`)
			p.screenshot("activity")
			if !p.mobile {
				p.do("close Activity with Escape", chromedp.KeyEvent(kb.Escape))
				p.waitFor("Activity closed", `!document.querySelector('#app').classList.contains('activity-open')`)
			}
			t.Logf("%s: %v", p.name, time.Since(started).Round(time.Millisecond))
		})
	}
}

func TestPWAApprovePlanRunsIt(t *testing.T) {
	mock := newMock(t)
	// The executor's first call waits for release, so that the work item's
	// last statuses arrive after a page reload.
	release := make(chan struct{})
	var once sync.Once
	replies := pwaReplies(helloPlan)
	mock.HandleReply(func(r *mockllm.RecordedRequest) (mockllm.Reply, bool) {
		if r.Schema == "ExecutorAgentOutput" {
			select {
			case <-release:
			case <-time.After(time.Minute):
			}
		}
		return replies(r)
	})
	defer once.Do(func() { close(release) })
	d := startPWADaemon(t, mock, t.TempDir(), 0)
	p := openPWA(t, d.Addr(), 375, 812)
	p.login()

	p.say("please write hello.txt")
	p.waitFor("the stream pointing to Review", hasText(".note-card", "Write hello.txt"))
	p.tab("review")
	p.waitFor("the plan card", hasText(card("plan")+" .intent", "Write hello.txt"))
	if !eval[bool](p, hasText(card("plan")+" .affected", "hello_exists")) {
		t.Error("the plan card does not name its check hello_exists")
	}
	if eval[string](p, `document.querySelector('.card').dataset.risk`) != "medium" || eval[bool](p, `document.querySelector('.card details').open`) {
		t.Error("a medium-risk plan card should have its details collapsed")
	}
	// CTA order: the recommended action first, the decline last.
	if got := eval[[]string](p, `[...document.querySelectorAll('.card .ctas button')].map((b) => b.className)`); len(got) != 2 ||
		!strings.Contains(got[0], "btn-primary") || !strings.Contains(got[1], "btn-decline") {
		t.Errorf("CTA order %v, want primary then decline", got)
	}

	// Medium risk: tap, then the confirm chip (by keyboard: it takes focus).
	p.do("tap Approve", chromedp.Click(chromedp.CSS(card("plan")+" .btn-primary")))
	p.waitFor("the confirm chip", `document.activeElement && document.activeElement.classList.contains('chip-confirm')`)
	if n := len(executorCalls(mock)); n != 0 {
		t.Fatalf("the executor ran %d times before the confirmation", n)
	}
	eval[bool](p, `(() => { window.__seen = []; const log = () => { for (const r of document.querySelectorAll('.status-row')) { if (window.__seen.at(-1) !== r.dataset.status) window.__seen.push(r.dataset.status); } };
		new MutationObserver(log).observe(document.body, { subtree: true, childList: true, attributes: true }); return true; })()`)
	p.do("confirm with Enter", chromedp.KeyEvent(kb.Enter))

	p.tab("stream")
	p.waitFor("the running status row", `!!document.querySelector('.status-row[data-status="running"]')`)
	if seen := eval[[]string](p, `window.__seen`); strings.Join(seen, ",") != "running" {
		t.Errorf("status row went through %v, want running, live", seen)
	}
	if !eval[bool](p, hasText(".status-row", "Write hello.txt")) {
		t.Error("the status row does not name the plan")
	}
	// After a reload the app still titles the work item's statuses with its
	// plan, by the approval_request's work_item_id.
	p.do("reload the page", chromedp.Reload())
	p.waitFor("the app reconnected after the reload", `document.querySelector('#conn').dataset.state === 'online'`)
	once.Do(func() { close(release) })
	p.waitFor("the results card", `!!document.querySelector('.card.kind-post [data-check="hello_exists"] .check-pass')`)
	p.waitFor("the done status row", `!!document.querySelector('.status-row[data-status="done"]')`)
	if got := eval[string](p, `document.querySelector('.status-row[data-status="done"] .status-title').textContent`); got != "Write hello.txt" {
		t.Errorf("after a reload the status row is titled %q, want the plan's title", got)
	}
	if n := len(executorCalls(mock)); n != 2 {
		t.Errorf("%d executor calls, want 2", n)
	}
	p.tab("review")
	if !eval[bool](p, hasText(card("post")+" .intent", "Write hello.txt: done")) {
		t.Error("the post-execution card does not say the plan is done")
	}
	p.do("dismiss the results", chromedp.Click(chromedp.CSS(card("post")+" .btn-primary")))
	p.waitFor("an empty review", `document.querySelector('#review-badge').hidden && !document.querySelector('.review-root .card')`)
}

func TestPWAHighRiskNeedsSlide(t *testing.T) {
	mock := newMock(t)
	scriptPWA(mock, networkPlan)
	d := startPWADaemon(t, mock, t.TempDir(), 0)
	p := openPWA(t, d.Addr(), 1440, 900)
	p.login()

	p.say("please write hello.txt")
	p.waitFor("the high-risk plan card", `document.querySelector('.review-root > .card.kind-plan')?.dataset.risk === 'high'`)
	if !eval[bool](p, `document.querySelector('.card details').open`) {
		t.Error("a high-risk card should have its details expanded")
	}

	// One tap on Approve, one on the end of the slider's track, and the End
	// key: none of them approves.
	p.do("tap Approve", chromedp.Click(chromedp.CSS(card("plan")+" .btn-primary")))
	p.waitFor("the slider", `!!document.querySelector('.slide-thumb')`)
	x, y, w, h := p.rect(".slide-track")
	p.do("tap the end of the track", chromedp.MouseClickXY(x+w-8, y+h/2))
	p.do("press End on the slider", chromedp.Focus(chromedp.CSS(".slide-thumb")), chromedp.KeyEvent(kb.End))
	if !eval[bool](p, `document.querySelector('.slide-thumb')?.getAttribute('aria-valuenow') === '0' && !document.querySelector('.status-row')`) {
		t.Fatal("a tap approved a high-risk plan")
	}
	if n := len(executorCalls(mock)); n != 0 {
		t.Fatalf("the executor ran %d times before the slide", n)
	}

	// A real slide: press the thumb, drag it across, release.
	tx, ty, tw, th := p.rect(".slide-thumb")
	cx, cy := tx+tw/2, ty+th/2
	drag := []chromedp.Action[chromedp.Void]{chromedp.MouseEvent(input.DispatchMouseEventTypeMousePressed, cx, cy, chromedp.ButtonLeft, clickCount(1))}
	for i := 1; i <= 10; i++ {
		drag = append(drag, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, cx+w*float64(i)/10, cy, chromedp.ButtonLeft, buttons(1)))
	}
	drag = append(drag, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseReleased, cx+w, cy, chromedp.ButtonLeft, clickCount(1)))
	p.do("slide to approve", drag...)
	p.waitFor("the plan running and done", `!!document.querySelector('.status-row[data-status="done"]')`)
	p.waitFor("the results card", `!!document.querySelector('.card.kind-post [data-check="hello_exists"] .check-pass')`)
	if eval[bool](p, `!!document.querySelector('.card.expired')`) {
		t.Error("the slide's answer was refused: an earlier tap must have answered")
	}
}

func clickCount(n int64) chromedp.MouseOption {
	return func(p *input.DispatchMouseEventParams) { p.ClickCount = n }
}

func buttons(b int64) chromedp.MouseOption {
	return func(p *input.DispatchMouseEventParams) { p.Buttons = b }
}

func TestPWADeclineRunsNothing(t *testing.T) {
	mock := newMock(t)
	scriptPWA(mock, helloPlan)
	d := startPWADaemon(t, mock, t.TempDir(), 0)
	p := openPWA(t, d.Addr(), 375, 812)
	p.login()

	p.say("please write hello.txt")
	p.tab("review")
	p.waitFor("the plan card", `!!document.querySelector('.review-root > .card.kind-plan')`)
	p.do("tap Decline", chromedp.Click(chromedp.CSS(card("plan")+" .btn-decline")))
	p.waitFor("an empty review", `document.querySelector('#review-badge').hidden && !document.querySelector('.review-root .card')`)
	p.tab("stream")
	p.waitFor("the declined answer", hasText(".msg-silas", "declined, so nothing was run"))
	if n := len(executorCalls(mock)); n != 0 {
		t.Errorf("a declined plan made %d executor calls", n)
	}
	if eval[bool](p, `!!document.querySelector('.status-row')`) {
		t.Error("a declined plan shows a work-item status")
	}
}

func TestPWAReconnectsAfterRestart(t *testing.T) {
	mock := newMock(t)
	scriptPWA(mock, helloPlan)
	dir := t.TempDir()
	d := startPWADaemon(t, mock, dir, 0)
	_, portText, err := net.SplitHostPort(d.Addr())
	if err != nil {
		t.Fatal(err)
	}
	port, _ := strconv.Atoi(portText)
	p := openPWA(t, d.Addr(), 375, 812)
	p.login()
	p.waitFor("the offline shell installed", `!!navigator.serviceWorker.controller`)
	p.say("please write hello.txt")
	p.waitFor("the review badge", `document.querySelector('#review-badge').textContent === '1'`)

	d.stop()
	p.waitFor("the app showing it is offline", `document.querySelector('#conn').dataset.state !== 'online'`)
	if got := eval[string](p, `document.querySelector('#conn').textContent`); !strings.Contains(got, "Offline") && !strings.Contains(got, "Connecting") {
		t.Errorf("connection label %q while the daemon is down", got)
	}
	p.do("write while offline", chromedp.SendKeys(chromedp.CSS("#say"), "a note written while offline"), chromedp.KeyEvent(kb.Enter))
	p.waitFor("the note queued", `[...document.querySelectorAll('.msg-user')].at(-1)?.dataset.state === 'queued'`)
	// With the daemon down, a reload still opens the app from the service
	// worker's shell, with the queue and the note kept.
	p.do("reload while the daemon is down", chromedp.Reload())
	p.waitFor("the shell offline with the note still queued", `document.querySelector('#conn').dataset.state !== 'online' &&
		[...document.querySelectorAll('.msg-user')].at(-1)?.dataset.state === 'queued' && document.querySelector('#review-badge').textContent === '1'`)

	startPWADaemon(t, mock, dir, port)
	p.waitFor("the app reconnected by itself", `document.querySelector('#conn').dataset.state === 'online'`)
	p.waitFor("the queued note delivered", `[...document.querySelectorAll('.msg-user')].at(-1)?.dataset.state === 'delivered'`)
	p.waitFor("the note's answer", hasText(".msg-silas", "Got the note you wrote offline."))
	if n := eval[int](p, `[...document.querySelectorAll('.msg-user')].filter((m) => m.textContent.includes('written while offline')).length`); n != 1 {
		t.Errorf("the offline note shows %d times", n)
	}

	// A reload (the phone dropping the tab) keeps the session, the stream
	// and the queue: nothing but the token is needed to come back.
	p.do("reload the page", chromedp.Reload())
	p.waitFor("the app reconnected after the reload", `document.querySelector('#conn').dataset.state === 'online'`)
	if !eval[bool](p, hasText(".msg-silas", "Got the note you wrote offline.")) {
		t.Error("the stream was lost in the reload")
	}

	// The card is still there, but the restart ended the approval on the
	// server (GET /approvals/pending no longer lists it): it shows expired
	// without being answered, offers only Dismiss, and nothing runs.
	p.tab("review")
	p.waitFor("the plan card back, marked expired", `document.querySelector('.review-root > .card.kind-plan')?.dataset.state === 'expired' && document.querySelector('#review-badge').hidden`)
	if !eval[bool](p, hasText(".card.expired .expired-note", "expired")) || eval[int](p, `document.querySelectorAll('.card.expired .ctas button').length`) != 1 {
		t.Error("the expired card does not say it expired, or offers more than Dismiss")
	}
	if n := len(executorCalls(mock)); n != 0 {
		t.Errorf("an expired approval made %d executor calls", n)
	}
	p.do("dismiss it", chromedp.Click(chromedp.CSS(".card.expired .btn-primary")))
	p.waitFor("an empty review", `!document.querySelector('.review-root .card')`)
}

// Spec 8.1, 0.5.5: a plan card expires at the approval_request's
// expires_at, the server's configured request timeout, by itself: with
// silas.approval.request_timeout_seconds at 3 the card shows expired
// seconds after it arrived, not after a fixed client-side 300 s.
func TestPWAPlanCardExpiresWithTheServer(t *testing.T) {
	mock := newMock(t)
	scriptPWA(mock, helloPlan)
	ov := overrides(t, mock, t.TempDir())
	ov["silas.approval.request_timeout_seconds"] = 3
	d := startTest(t, loadConfig(t, ov))
	p := openPWA(t, d.Addr(), 375, 812)
	p.login()

	p.say("please write hello.txt")
	p.tab("review")
	p.waitFor("the plan card", `document.querySelector('.review-root > .card.kind-plan')?.dataset.state === 'pending'`)
	expiry := eval[[]float64](p, `(() => { const c = JSON.parse(localStorage.getItem('silas.cards')).find((x) => x.kind === 'plan');
		return [c.expiresAt - c.receivedAt, Date.parse(c.ev.expires_at) - c.expiresAt]; })()`)
	if len(expiry) != 2 || expiry[0] <= 0 || expiry[0] > 3000 || expiry[1] != 0 {
		t.Fatalf("the card expires %v ms after it arrived and %v ms before the event's expires_at; want within the server's 3 s, at expires_at", expiry[0], expiry[1])
	}
	p.waitFor("the card expired by itself", hasText(".card.expired .expired-note", "Time ran out"))
	if !eval[bool](p, `document.querySelector('#review-badge').hidden`) || eval[int](p, `document.querySelectorAll('.card.expired .ctas button').length`) != 1 {
		t.Error("the expired card still counts as a pending decision, or offers more than Dismiss")
	}
	p.tab("stream")
	p.waitFor("the plan declined for want of an answer", hasText(".msg-silas", "treated as declined and nothing was run"))
	if n := len(executorCalls(mock)); n != 0 {
		t.Errorf("a timed-out approval made %d executor calls", n)
	}
}

// Spec 8.1, 0.5.5: on a device whose clock runs behind the server's, a plan
// card can still look answerable after the server timed the request out;
// answered, it shows expired, and nothing runs. The server's timeout is
// observed (the plan's answer in the stream, the request gone from
// GET /approvals/pending) before the answer is sent.
func TestPWAApprovalAnsweredAfterTimeoutExpires(t *testing.T) {
	mock := newMock(t)
	scriptPWA(mock, helloPlan)
	ov := overrides(t, mock, t.TempDir())
	ov["silas.approval.request_timeout_seconds"] = 2
	d := startTest(t, loadConfig(t, ov))
	p := openPWA(t, d.Addr(), 375, 812)
	p.login()
	eval[bool](p, `(() => { const real = Date.now; Date.now = () => real() - 10 * 60 * 1000; return true; })()`)

	p.say("please write hello.txt")
	p.waitFor("the plan declined for want of an answer", hasText(".msg-silas", "treated as declined and nothing was run"))
	if _, pending := pendingApprovals(t, d.Addr(), pwaToken); len(pending) != 0 {
		t.Fatalf("approvals %v still pending after the timeout", pending)
	}
	p.tab("review")
	p.waitFor("the plan card, still answerable here", `document.querySelector('.review-root > .card.kind-plan')?.dataset.state === 'pending'`)
	p.do("approve it", chromedp.Click(chromedp.CSS(card("plan")+" .btn-primary")), chromedp.Click(chromedp.CSS(".chip-confirm")))
	p.waitFor("the card marked expired", hasText(".card.expired .expired-note", "expired"))
	if !eval[bool](p, `document.querySelector('#review-badge').hidden`) {
		t.Error("the expired card still counts as a pending decision")
	}
	p.tab("stream")
	if eval[bool](p, `!!document.querySelector('.status-row')`) {
		t.Error("a timed-out plan shows a work-item status")
	}
	if n := len(executorCalls(mock)); n != 0 {
		t.Errorf("an approval after the timeout made %d executor calls", n)
	}
}

// Approval cadence (spec 0.5.4 item 3): medium-risk decisions taken in
// under a second bring a visual cue on the next card, which still takes one
// tap; the decisions and the cue reach the audit log as UX metrics.
func TestPWAFastDecisionsBringAttentionCue(t *testing.T) {
	mock := newMock(t)
	scriptPWA(mock, helloPlan)
	dir := t.TempDir()
	d := startPWADaemon(t, mock, dir, 0)
	p := openPWA(t, d.Addr(), 1440, 900)
	metricsPosted := p.responses("/ux/metrics")
	p.login()

	const declined = "declined, so nothing was run"
	countDeclined := func(n int) string {
		return fmt.Sprintf(`[...document.querySelectorAll('.msg-silas')].filter((m) => m.textContent.includes(%s)).length === %d`, js(declined), n)
	}
	for i := 1; i <= 3; i++ {
		if eval[bool](p, `!!document.querySelector('.fatigue-cue')`) {
			t.Fatalf("attention cue after %d decisions", i-1)
		}
		p.say("please write hello.txt")
		p.waitFor("the plan card", `!!document.querySelector('.review-root > .card.kind-plan')`)
		p.do("decline at once", chromedp.Click(chromedp.CSS(card("plan")+" .btn-decline")))
		p.waitFor("the declined answer", countDeclined(i))
	}
	p.say("please write hello.txt")
	p.waitFor("the cue on the next card", `!!document.querySelector('.fatigue-cue') && !!document.querySelector('.review-root > .card.kind-plan.attention')`)
	p.do("decline with one tap all the same", chromedp.Click(chromedp.CSS(card("plan")+" .btn-decline")))
	p.waitFor("the declined answer", countDeclined(4))
	metricsPosted(4) // the metrics go out beside the answers; let them land before the stop
	d.stop()

	var decisions, fatigue int
	for _, data := range auditData(t, filepath.Join(dir, "db"), "ux_metric") {
		switch {
		case strings.Contains(data, `"metric":"decision_time"`) && strings.Contains(data, `"card_type":"plan_approval"`):
			decisions++
		case strings.Contains(data, `"metric":"approval_fatigue"`):
			fatigue++
		}
	}
	if decisions != 4 || fatigue != 1 {
		t.Errorf("audit has %d plan decision times and %d fatigue cues as UX metrics, want 4 and 1", decisions, fatigue)
	}
}

// SecureInputCard (spec 0.5.3, 8.1): the secret goes to POST
// /secrets/{ref_id} and never over the WebSocket, which only carries
// {ref_id, success}; the pending request is found on connect.
func TestPWASecureInputBypassesTheSocket(t *testing.T) {
	const ref, secret = "notion-token", "ntn_pwa-test-secret-value"
	mock := newMock(t)
	scriptPWA(mock, helloPlan)
	dir := t.TempDir()
	db, err := persistence.Open(context.Background(), persistence.Options{Dir: filepath.Join(dir, "db")})
	if err != nil {
		t.Fatal(err)
	}
	err = db.SecureInputs().Create(context.Background(), persistence.SecureInputRequest{
		RefID: ref, Label: "Notion integration token", InputHint: "ntn_...", Scope: "owner", CreatedAt: time.Now(),
		Guidance: persistence.SecureInputGuidance{Instructions: "Paste the token from Notion's integrations page."},
	})
	if cerr := db.Close(); err != nil || cerr != nil {
		t.Fatalf("create the pending request: %v %v", err, cerr)
	}
	d, logs := startLogged(t, overrides(t, mock, dir))
	p := openPWA(t, d.Addr(), 375, 812)
	stored := p.responses("/secrets/" + ref)
	sent := p.wsSent()
	p.login()

	p.tab("review")
	p.waitFor("the secure input card", hasText(card("secure")+" label", "Notion integration token"))
	if typ := eval[string](p, `document.querySelector('.secure-form input').type`); typ != "password" {
		t.Errorf("the secret field is type %q, want password", typ)
	}
	p.do("type the secret", chromedp.SendKeys(chromedp.CSS(".secure-form input"), secret), chromedp.KeyEvent(kb.Enter))
	stored(1)
	p.waitFor("the card gone", `!document.querySelector('.review-root .card.kind-secure')`)
	frames := sent(`"secure_input_completed"`)
	for _, f := range frames {
		if strings.Contains(f, secret) {
			t.Fatalf("the secret went over the WebSocket: %s", f)
		}
	}
	if last := frames[len(frames)-1]; !strings.Contains(last, `"ref_id":"`+ref+`"`) || !strings.Contains(last, `"success":true`) {
		t.Errorf("completion frame %s, want ref_id %s and success true", last, ref)
	}
	if eval[bool](p, `Object.keys(localStorage).some((k) => localStorage.getItem(k).includes(`+js(secret)+`))`) {
		t.Error("the secret is in localStorage")
	}
	d.stop()
	if strings.Contains(logs.String(), secret) {
		t.Error("the secret is in the daemon's log (debug level)")
	}

	db, err = persistence.Open(context.Background(), persistence.Options{Dir: filepath.Join(dir, "db")})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	r, err := db.SecureInputs().Get(context.Background(), ref)
	if err != nil || r.FulfilledAt == nil {
		t.Fatalf("request after the post: %+v, %v; want it fulfilled", r, err)
	}
	entries, err := db.Audit().Range(context.Background(), 0, 10000)
	if err != nil {
		t.Fatal(err)
	}
	stores := 0
	for _, e := range entries {
		if strings.Contains(string(e.Data), secret) {
			t.Errorf("audit entry %d (%s) holds the secret", e.Seq, e.Event)
		}
		if e.Event == "secret_stored" && strings.Contains(string(e.Data), ref) {
			stores++
		}
	}
	if stores != 1 {
		t.Errorf("%d secret_stored audit entries naming %s, want 1", stores, ref)
	}
}

// scriptedOwner is the session side of a web server that, once the owner
// authenticates, sends a fixed list of card events and records every frame
// the app answers with. The daemon produces only plan approvals so far; this
// drives the real app and transport through the other card types of spec
// 8.1 and checks the frames the protocol expects.
type scriptedOwner struct {
	events []any
	frames chan map[string]any
}

func (g *scriptedOwner) Attach(_ messages.ConnInfo, out messages.Outbound) messages.Conn {
	return &scriptedConn{g: g, out: out}
}

type scriptedConn struct {
	g   *scriptedOwner
	out messages.Outbound
}

func (c *scriptedConn) Frame(f *messages.Frame) {
	if f.Type == messages.TypeAuth {
		if f.Token != pwaToken {
			c.out.Close(4001, "unauthorized")
			return
		}
		c.out.Send(map[string]any{"type": "session", "role": "owner"})
		for _, ev := range c.g.events {
			c.out.Send(ev)
		}
		return
	}
	var m map[string]any
	if err := json.Unmarshal(f.Raw, &m); err == nil {
		select {
		case c.g.frames <- m:
		default: // the test reads every frame it expects; more is a failure it reports
		}
	}
}

func (c *scriptedConn) Closed() {}

func startScriptedOwner(t *testing.T, events []any) (*scriptedOwner, string) {
	t.Helper()
	g := &scriptedOwner{events: events, frames: make(chan map[string]any, 64)}
	srv, err := web.New(web.Options{Port: 0, Gateway: g, Static: web.Static()})
	if err == nil {
		err = srv.Listen()
	}
	if err != nil {
		t.Fatalf("start the web server: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	return g, srv.Addr().String()
}

// next returns the next frame the app sent, failing after the step deadline.
func (g *scriptedOwner) next(t *testing.T) map[string]any {
	t.Helper()
	select {
	case f := <-g.frames:
		return f
	case <-time.After(pwaStep):
		t.Fatalf("no frame from the app within %v", pwaStep)
		return nil
	}
}

// passLadder completes the risk ladder step the active card asks for after
// its CTA was tapped: nothing (low), the confirm chip (medium), or the
// slide, by keyboard (high).
func (p *pwa) passLadder(risk string) {
	p.t.Helper()
	switch risk {
	case "medium":
		p.do("confirm", chromedp.Click(chromedp.CSS(".chip-confirm")))
	case "high", "irreversible":
		p.waitFor("the slider focused", `document.activeElement?.classList.contains('slide-thumb')`)
		for i := 0; i < 10; i++ {
			p.do("slide by keyboard", chromedp.KeyEvent(kb.ArrowRight))
		}
	}
}

func TestPWACardContract(t *testing.T) {
	batch := map[string]any{"batch_id": "batch-1", "goal_id": "inbox", "action": "archive", "reason_summary": "Newsletters nobody opened this month.",
		"confidence_min": 0.4, "items": []any{
			map[string]any{"item_id": "m1", "title": "Weekly digest", "actor": "news@example.com", "confidence": 0.97},
			map[string]any{"item_id": "m2", "title": "Invoice 2231", "actor": "billing@example.com", "confidence": 0.4},
			map[string]any{"item_id": "m3", "title": "Product update", "actor": "hello@example.com", "confidence": 0.95},
		}}
	steps := []struct {
		event  map[string]any
		kind   string
		risk   string
		intent string
		act    func(p *pwa) // taps the CTA (and fills inputs)
		safe   bool         // the CTA runs nothing, so one tap answers whatever the risk
		want   map[string]any
	}{
		{
			event: map[string]any{"type": "gate_approval", "request_id": "g1", "gate_name": "pii", "value": "4111 1111", "context": "The reply holds what looks like a card number.", "risk_level": "medium"},
			kind:  "gate", risk: "medium", intent: `Gate "pii"`,
			act:  func(p *pwa) { p.do("allow", chromedp.Click(chromedp.CSS(card("gate")+" .btn-primary"))) },
			want: map[string]any{"type": "gate_response", "request_id": "g1", "verdict": "approve"},
		},
		{
			event: map[string]any{"type": "batch_review", "request_id": "b1", "batch": batch},
			kind:  "batch", risk: "medium", intent: "Archive 3 items",
			act: func(p *pwa) {
				if !eval[bool](p, `!document.querySelector('#bi-m2').checked && document.querySelector('#bi-m2').closest('.anomaly') && document.querySelector('#bi-m1').checked`) {
					p.t.Error("the unusual item is not flagged and unchecked, or a usual one is unchecked")
				}
				p.do("approve the checked items", chromedp.Click(chromedp.CSS(card("batch")+" .btn-primary")))
			},
			want: map[string]any{"type": "batch_review_response", "request_id": "b1", "verdict": "edit_selection", "selected_item_ids": []any{"m1", "m3"}},
		},
		{
			event: map[string]any{"type": "decision", "request_id": "d1", "question": "Which calendar should I use?", "allow_freetext": true,
				"options": []any{map[string]any{"label": "Work", "value": "work"}, map[string]any{"label": "Personal", "value": "personal"}}},
			kind: "decision", risk: "low", intent: "Which calendar should I use?",
			act: func(p *pwa) {
				p.do("answer in words and pick Personal", chromedp.SendKeys(chromedp.CSS(".freetext"), "the shared one"),
					chromedp.Click(chromedp.CSS(card("decision")+" .btn-alt")))
			},
			want: map[string]any{"type": "decision_response", "request_id": "d1", "selected_value": "personal", "freetext": "the shared one"},
		},
		{
			event: map[string]any{"type": "draft_review", "request_id": "r1", "context": "Reply to Ana about Friday.", "draft": "Friday works.", "metadata": map[string]any{}},
			kind:  "draft", risk: "medium", intent: "Review a draft",
			act: func(p *pwa) {
				p.do("edit the draft", chromedp.SendKeys(chromedp.CSS(".draft-text"), " See you at 10."),
					chromedp.Click(chromedp.CSS(card("draft")+" .btn-alt")))
			},
			want: map[string]any{"type": "draft_review_response", "request_id": "r1", "verdict": "edit", "edited_text": "Friday works. See you at 10."},
		},
		{
			event: map[string]any{"type": "autonomy_threshold_review", "request_id": "a1", "proposal": map[string]any{
				"proposal_id": "ap1", "changes": []any{map[string]any{"key": "batch_review.default_size", "current_value": "10", "proposed_value": "20", "direction": "widen"}},
				"sample_size": 50, "correction_rate": 0.02, "evidence_window": "last 50 batches / 14 days",
				"rationale": "You approved 49 of the last 50 batches unchanged.", "risk_level": "high"}},
			kind: "autonomy", risk: "high", intent: "Widen batch_review.default_size: 10 → 20",
			act:  func(p *pwa) { p.do("approve", chromedp.Click(chromedp.CSS(card("autonomy")+" .btn-primary"))) },
			want: map[string]any{"type": "autonomy_threshold_response", "request_id": "a1", "verdict": "approve"},
		},
		{
			event: map[string]any{"type": "suggestion", "request_id": "s1", "suggestion": map[string]any{"suggestion_id": "sg1",
				"intent": "Archive last week's newsletters", "rationale": "They are all read.", "risk_level": "medium"}},
			kind: "suggestion", risk: "medium", intent: "Archive last week's newsletters",
			act:  func(p *pwa) { p.do("not interested", chromedp.Click(chromedp.CSS(card("suggestion")+" .btn-decline"))) },
			safe: true,
			want: map[string]any{"type": "suggestion_response", "request_id": "s1", "selected_value": "dismiss"},
		},
		{
			event: map[string]any{"type": "permission_escalation", "request_id": "p1", "connection_name": "Gmail", "current_permissions": []any{"read"},
				"requested_permissions": []any{"read", "send"}, "reason": "To send the drafts you approve.", "risk_level": "medium"},
			kind: "permission", risk: "medium", intent: "Give Gmail more access",
			act:  func(p *pwa) { p.do("just this once", chromedp.Click(chromedp.CSS(card("permission")+" .btn-alt"))) },
			want: map[string]any{"type": "permission_escalation_response", "request_id": "p1", "verdict": "just_this_once"},
		},
		{
			event: map[string]any{"type": "connection_failure", "request_id": "f1", "failure_type": "consent_denied", "service": "Microsoft 365",
				"message": "Your admin blocked the consent.", "recovery_options": []any{
					map[string]any{"action": "request_admin_approval", "label": "Ask your IT admin", "description": "Sends a request.", "risk_level": "low"},
					map[string]any{"action": "skip", "label": "Skip", "description": "Go on without it.", "risk_level": "low"}}},
			kind: "failure", risk: "low", intent: "Microsoft 365: consent_denied",
			act:  func(p *pwa) { p.do("ask the admin", chromedp.Click(chromedp.CSS(card("failure")+" .btn-primary"))) },
			want: map[string]any{"type": "connection_failure_response", "request_id": "f1", "selected_action": "request_admin_approval"},
		},
		{
			event: map[string]any{"type": "approval_request", "request_id": "conn-1", "scope": "connection_manage", "title": "Connect to GitHub?",
				"body": "Connect Silas to GitHub through the oauth-device skill (device_code).", "risk_level": "medium",
				"connection": map[string]any{"connection_id": "cn-1", "name": "GitHub", "skill_name": "oauth-device", "auth_strategy": "device_code",
					"permissions": []any{"observe"}, "requested_scopes": []any{"read:user"}}},
			kind: "connect", risk: "medium", intent: "Connect to GitHub?",
			act:  func(p *pwa) { p.do("connect", chromedp.Click(chromedp.CSS(card("connect")+" .btn-primary"))) },
			want: map[string]any{"type": "approval_response", "request_id": "conn-1", "verdict": "approved"},
		},
		{
			event: map[string]any{"type": "checkpoint", "request_id": "c1", "message": "Halfway through. Continue?", "options": []any{"continue", "stop"}},
			kind:  "checkpoint", risk: "low", intent: "Halfway through.",
			act:  func(p *pwa) { p.do("continue", chromedp.Click(chromedp.CSS(card("checkpoint")+" .btn-primary"))) },
			want: map[string]any{"type": "checkpoint", "request_id": "c1", "verdict": "continue"},
		},
	}
	events := make([]any, len(steps))
	for i, s := range steps {
		events[i] = s.event
	}
	g, addr := startScriptedOwner(t, events)
	p := openPWA(t, addr, 375, 812)
	p.login()
	p.waitFor("the review badge", fmt.Sprintf(`document.querySelector('#review-badge').textContent === '%d'`, len(steps)))
	// Six of the nine are medium risk or more: the queue density cue
	// (spec 0.5.4 item 4) shows, without holding anything back.
	if !eval[bool](p, `document.querySelector('#review-badge').classList.contains('elevated')`) {
		t.Error("the review badge is not elevated with 6 medium+ decisions queued")
	}
	p.tab("review")
	if !eval[bool](p, `!!document.querySelector('.density-cue')`) {
		t.Error("no queue density cue with 6 medium+ decisions queued")
	}
	if n := eval[int](p, `document.querySelectorAll('.upnext .upnext-item .badge').length`); n != len(steps)-1 {
		t.Errorf("up next shows %d items with a risk badge, want %d", n, len(steps)-1)
	}
	p.screenshot("review-queue")
	if !eval[bool](p, `[...document.querySelectorAll('#review *')].every((e) => e.getBoundingClientRect().right <= innerWidth + 0.5)`) {
		t.Error("the Review surface is wider than the 375 px screen")
	}

	rank := map[string]int{"btn-primary": 0, "btn-alt": 1, "btn-decline": 2, "btn-destructive": 2}
	for _, s := range steps {
		id := s.event["request_id"].(string)
		p.waitFor("card "+id+" active", fmt.Sprintf(`document.querySelector('.review-root > .card')?.dataset.cardId === %s`, js(id)))
		if got := eval[string](p, `document.querySelector('.review-root > .card').dataset.risk`); got != s.risk {
			t.Errorf("%s: risk %q, want %q", id, got, s.risk)
		}
		if !eval[bool](p, hasText(card(s.kind)+" .intent", s.intent)) {
			t.Errorf("%s: intent %q, want it to hold %q", id, eval[string](p, `document.querySelector('.review-root > .card .intent').textContent`), s.intent)
		}
		if h := eval[float64](p, `document.querySelector('.review-root > .card .card-body').getBoundingClientRect().height`); h > 300 {
			t.Errorf("%s: card body is %.0f px high at 375 px wide, over 300", id, h)
		}
		if open := eval[bool](p, `!!document.querySelector('.review-root > .card details')?.open`); open != (s.risk == "high") {
			t.Errorf("%s: details open = %v at risk %s", id, open, s.risk)
		}
		classes := eval[[]string](p, `[...document.querySelectorAll('.review-root > .card .ctas button')].map((b) => b.classList[1])`)
		for i := 1; i < len(classes); i++ {
			if rank[classes[i]] < rank[classes[i-1]] {
				t.Errorf("%s: CTA order %v breaks recommended, alternatives, decline", id, classes)
			}
		}
		s.act(p)
		if !s.safe {
			p.passLadder(s.risk)
		}
		got := g.next(t)
		for k, v := range s.want {
			if fmt.Sprint(got[k]) != fmt.Sprint(v) {
				t.Errorf("%s: frame %v, want %s = %v", id, got, k, v)
			}
		}
	}
	p.waitFor("an empty review", `document.querySelector('#review-badge').hidden && !document.querySelector('.review-root .card')`)
	select {
	case f := <-g.frames:
		t.Errorf("unexpected frame %v", f)
	default:
	}
}

// Spec 8.2 Activity, 0.5.6 ("what did you do while I slept"): the app
// records each visit, and Activity shows what happened since the previous
// one first, as its own span, with the older timeline after it.
func TestPWAActivityShowsSinceLastVisitFirst(t *testing.T) {
	mock := newMock(t)
	scriptPWA(mock, helloPlan)
	d := startPWADaemon(t, mock, t.TempDir(), 0)
	addr := d.Addr()
	c := owner(t, addr)
	before := c.say("before the last visit")
	c.answer(before)
	pwaTurnTaint(t, d, before) // its turn is in the audit log before the visit
	var visit struct {
		VisitedAt time.Time `json:"visited_at"`
	}
	pwaJSON(t, addr, "POST", "/activity/visit", pwaToken, "", 200, &visit) // the owner's previous visit
	c.answer(c.say("while the owner was away"))

	p := openPWA(t, addr, 1440, 900)
	p.login()
	p.tab("activity")
	p.waitFor("the span and the timeline before it", `document.querySelector('#activity-list').firstElementChild?.id === 'activity-away' &&
		!!document.querySelector('.activity-item[data-span="earlier"]')`)
	if !eval[bool](p, hasText("#activity-away h3", "Since your last visit")) || !eval[bool](p, hasText("#activity-away p", "happened while you were away")) {
		t.Errorf("span heading %q", eval[string](p, `document.querySelector('#activity-away').textContent`))
	}
	p.screenshot("activity-since-last-visit")
	type item struct {
		Span, Event, Time string
	}
	var items []item
	for _, s := range eval[[]string](p, `[...document.querySelectorAll('.activity-item')].map((e) => [e.dataset.span, e.dataset.event, e.querySelector('time')?.getAttribute('datetime')].join(' '))`) {
		f := strings.Fields(s)
		if len(f) != 3 {
			t.Fatalf("activity item %q has no time", s)
		}
		items = append(items, item{f[0], f[1], f[2]})
	}
	spanOK, turns := true, map[string]int{}
	for i, it := range items {
		at, err := time.Parse(time.RFC3339Nano, it.Time)
		if err != nil {
			t.Fatal(err)
		}
		// The page's times are to the millisecond, rounded down.
		switch {
		case it.Span == "away" && at.Before(visit.VisitedAt.Truncate(time.Millisecond)),
			it.Span == "earlier" && at.After(visit.VisitedAt),
			it.Span == "away" && i > 0 && items[i-1].Span == "earlier":
			spanOK = false
		}
		if it.Event == "turn_completed" {
			turns[it.Span]++
		}
	}
	if !spanOK || turns["away"] != 1 || turns["earlier"] != 1 {
		t.Errorf("activity items %v around the visit at %v: want the entries since the visit first, one turn each side", items, visit.VisitedAt)
	}
}

// The plan card shows every field the approval token signs, each in its
// own row, and for a project each task with its own fields.
func TestPWAPlanCardShowsEverySignedField(t *testing.T) {
	// rows reads the visible text of each field row under root.
	rows := func(p *pwa, root string) map[string]string {
		return eval[map[string]string](p, fmt.Sprintf(`(() => { const out = {};
			for (const r of document.querySelectorAll(%s)) out[r.dataset.field] = r.getClientRects().length > 0 ? r.innerText : '';
			return out; })()`, js(root+" > .plan-fields > .plan-field")))
	}
	check := func(t *testing.T, where string, got map[string]string, markers map[string][]string) {
		t.Helper()
		for field, wants := range markers {
			row, ok := got[field]
			if !ok {
				t.Errorf("%s: the card has no row for %s (rows: %v)", where, field, got)
				continue
			}
			for _, want := range wants {
				if !strings.Contains(row, want) {
					t.Errorf("%s: the %s row %q does not show %q", where, field, row, want)
				}
			}
		}
	}
	t.Run("every field", func(t *testing.T) {
		markers := planMarkers(t, everyFieldPlan)
		mock := newMock(t)
		scriptPWA(mock, everyFieldPlan)
		d := startPWADaemon(t, mock, t.TempDir(), 0)
		p := openPWA(t, d.Addr(), 1440, 900)
		p.login()
		p.say("please watch hello.txt")
		// The check has network access, so the card is high risk and its
		// details are open.
		p.waitFor("the plan card", `document.querySelector('.review-root > .card.kind-plan')?.dataset.risk === 'high'`)
		p.waitFor("the signed fields shown", `!!document.querySelector('.review-root > .card.kind-plan .details[open] .plan-fields')`)
		got := rows(p, card("plan")+" .details-body")
		check(t, "plan card", got, markers)
		if !strings.Contains(got["verify"], "yes") {
			t.Errorf("the verify row %q does not say the check has network access", got["verify"])
		}
		if !eval[bool](p, hasText(card("plan")+" .affected", "network access")) || !eval[bool](p, hasText(card("plan")+" .affected", "1 gate")) {
			t.Error("the card's summary does not mention the plan's gate and network access")
		}
		p.do("decline", chromedp.Click(chromedp.CSS(card("plan")+" .btn-decline")))
		p.waitFor("an empty review", `!document.querySelector('.review-root .card')`)
	})
	t.Run("project", func(t *testing.T) {
		mock := newMock(t)
		scriptPWA(mock, projectPlan)
		d := startPWADaemon(t, mock, t.TempDir(), 0)
		p := openPWA(t, d.Addr(), 1440, 900)
		p.login()
		p.say("please build hello.txt pages")
		p.waitFor("the plan card", hasText(card("plan")+" .intent", "Build two pages"))
		if !eval[bool](p, `document.querySelector('.review-root > .card.kind-plan details').open`) {
			p.do("open the details", chromedp.Click(chromedp.CSS(card("plan")+" details > summary")))
		}
		p.waitFor("the task sections", `document.querySelectorAll('.review-root > .card.kind-plan .plan-task').length === 2`)
		if got := eval[[]string](p, `[...document.querySelectorAll('.review-root > .card.kind-plan .plan-task')].map((s) => s.dataset.task)`); strings.Join(got, ",") != "task-page-a,task-page-b" {
			t.Errorf("task sections %v, want task-page-a then task-page-b", got)
		}
		for task, markers := range projectTaskMarkers {
			check(t, task, rows(p, card("plan")+` .plan-task[data-task="`+task+`"]`), markers)
		}
		if !eval[bool](p, hasText(card("plan")+" .affected", "2 tasks")) {
			t.Error("the card's summary does not count the project's tasks")
		}
	})
}
