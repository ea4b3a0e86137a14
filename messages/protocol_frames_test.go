package messages

import "testing"

func TestIsClientType(t *testing.T) {
	tests := []struct {
		typ  string
		want bool
	}{
		{TypeAuth, true},
		{TypeMessage, true},
		{TypeConnectionFailureResponse, true},
		{"approval_request", false}, // server -> client
		{"", false},
		{"Message", false},
	}
	for _, tt := range tests {
		if got := IsClientType(tt.typ); got != tt.want {
			t.Errorf("IsClientType(%q) = %v, want %v", tt.typ, got, tt.want)
		}
	}
}
