package main

import (
	"strings"
	"testing"
)

// TestReadyReportsAnUnreachableModel: /ready is false while no model
// provider accepts connections, and says which provider, not its URL;
// /health stays true.
func TestReadyReportsAnUnreachableModel(t *testing.T) {
	mock := newMock(t)
	ov := overrides(t, mock, t.TempDir())
	ov["silas.providers.openrouter.base_url"] = "http://127.0.0.1:1/v1" // nothing listens on port 1
	d := startTest(t, loadConfig(t, ov))
	status, checks := readyState(t, d.Addr())
	if status != 503 || checks["model"].OK || !checks["database"].OK || !checks["actors"].OK || !checks["disk"].OK {
		t.Fatalf("/ready = %d %+v", status, checks)
	}
	if detail := checks["model"].Detail; !strings.Contains(detail, "openrouter") || strings.Contains(detail, "127.0.0.1") {
		t.Errorf("model detail %q: wants the provider's name, not its address", detail)
	}
	if status, _ := pwaCall(t, d.Addr(), "GET", "/health", "", ""); status != 200 {
		t.Errorf("/health = %d", status)
	}
}
