package connection

import "testing"

// FuzzDecodeSetupEvent: a line a setup script prints decodes into a checked
// event or an error, never panics, and a decoded step is valid.
func FuzzDecodeSetupEvent(f *testing.F) {
	f.Add([]byte(`{"type":"setup_step","step_id":"s1","step":{"type":"device_code","verification_url":"https://example.com/device","user_code":"ABCD-EFGH","expires_in":900,"poll_interval":5}}`))
	f.Add([]byte(`{"type":"await_input","step_id":"s1"}`))
	f.Add([]byte(`{"type":"completion","connection_payload":{"success":true,"summary":"ok","permissions_granted":["read"]}}`))
	f.Add([]byte(`{"type":"failure","failure":{"failure_type":"token_revoked","service":"x","message":"m","recovery_options":[]}}`))
	f.Add([]byte(`{"type":"log","level":"info","message":"hi"}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		ev, err := DecodeSetupEvent(line)
		if err != nil || ev.Step == nil {
			return
		}
		if err := ev.Step.Validate(); err != nil {
			t.Fatalf("a decoded step does not validate: %v", err)
		}
	})
}
