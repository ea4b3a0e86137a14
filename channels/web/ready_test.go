package web

import (
	"context"
	"encoding/json"
	"net/http"
	"sync/atomic"
	"testing"
)

// readyGateway is a fakeGateway whose readiness the test sets.
type readyGateway struct {
	fakeGateway
	checks atomic.Pointer[[]ReadyCheck]
	sawCtx atomic.Bool // Ready got a context with a deadline
}

func (g *readyGateway) Ready(ctx context.Context) []ReadyCheck {
	_, ok := ctx.Deadline()
	g.sawCtx.Store(ok)
	return *g.checks.Load()
}

func TestReady(t *testing.T) {
	gw := &readyGateway{}
	s, _ := startServer(t, Options{Gateway: gw})
	cases := []struct {
		name   string
		checks []ReadyCheck
		code   int
		status string
	}{
		{"all ok", []ReadyCheck{{Name: "database", OK: true}, {Name: "disk", OK: true, Detail: "900 MB free"}}, 200, "ready"},
		{"one failing", []ReadyCheck{{Name: "database", OK: true}, {Name: "disk", OK: false, Detail: "12 MB free, below 256"}}, 503, "not_ready"},
		{"all failing", []ReadyCheck{{Name: "actors"}, {Name: "model"}}, 503, "not_ready"},
		{"no checks", []ReadyCheck{}, 200, "ready"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			gw.checks.Store(&tc.checks)
			code, body, h := httpGet(t, httpURL(s, "/ready"), nil)
			var got readyBody
			if err := json.Unmarshal([]byte(body), &got); err != nil {
				t.Fatalf("/ready body %q: %v", body, err)
			}
			if code != tc.code || got.Status != tc.status || len(got.Checks) != len(tc.checks) {
				t.Fatalf("/ready = %d %s, want %d %s", code, body, tc.code, tc.status)
			}
			for i, c := range got.Checks {
				if c != tc.checks[i] {
					t.Errorf("check %d = %+v, want %+v", i, c, tc.checks[i])
				}
			}
			if h.Get("Cache-Control") != "no-store" || h.Get("Content-Type") != "application/json" {
				t.Errorf("headers %v", h)
			}
			if !gw.sawCtx.Load() {
				t.Error("Ready got a context without a deadline")
			}
		})
	}
}

func TestReadyWithoutReporterAndMethods(t *testing.T) {
	s, _ := startServer(t, Options{})
	if code, body, _ := httpGet(t, httpURL(s, "/ready"), nil); code != 200 || body != `{"status":"ready","checks":[]}` {
		t.Fatalf("/ready without a reporter = %d %s", code, body)
	}
	req, err := http.NewRequest(http.MethodPost, httpURL(s, "/ready"), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("POST /ready = %d", resp.StatusCode)
	}
}
