package main

import "testing"

// TestPWASandboxBanner: the app warns the owner, for as long as the
// daemon runs so, that agent code is not isolated; with an isolating
// backend there is no banner.
func TestPWASandboxBanner(t *testing.T) {
	cases := []struct {
		name    string
		backend string
		want    string // "" means no banner
	}{
		{"unisolated subprocess", "subprocess", "WITHOUT isolation"},
		{"isolating backend", "auto", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mock := newMock(t)
			ov := overrides(t, mock, t.TempDir())
			ov["silas.sandbox.backend"] = tc.backend
			ov["silas.sandbox.allow_unisolated"] = tc.backend == "subprocess"
			d := startTest(t, loadConfig(t, ov))
			if tc.want == "" && !d.sandbox.Isolated {
				t.Fatalf("backend auto found no isolating sandbox on this host: %s", d.sandbox.Problem)
			}
			p := openPWA(t, d.Addr(), 1440, 900)
			p.login()
			p.waitFor("the session", `document.querySelector('#conn').dataset.state === 'online'`)
			shown := eval[bool](p, `!document.querySelector('#sandbox-banner').hidden`)
			if tc.want == "" {
				if shown {
					t.Fatalf("a sandbox banner shows with the isolating backend %s", d.sandbox.Backend)
				}
				return
			}
			if !shown || !eval[bool](p, hasText("#sandbox-banner", tc.want)) {
				t.Fatalf("no banner saying %q with backend %s", tc.want, tc.backend)
			}
		})
	}
}
