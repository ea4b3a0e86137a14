package taint

import (
	"testing"

	"github.com/silas-ai/silas/messages"
)

func TestDerived(t *testing.T) {
	const (
		o = messages.TaintOwner
		a = messages.TaintAuth
		x = messages.TaintExternal
	)
	tests := []struct {
		name    string
		message messages.TaintLevel
		seen    []messages.TaintLevel
		want    messages.TaintLevel
	}{
		{"owner, nothing seen", o, nil, o},
		{"auth, nothing seen", a, nil, a},
		{"external, nothing seen", x, nil, x},
		{"owner saw owner", o, []messages.TaintLevel{o, o}, o},
		{"owner saw auth", o, []messages.TaintLevel{o, a}, a},
		{"owner saw an external tool result", o, []messages.TaintLevel{o, x, o}, x},
		{"auth saw an external work result", a, []messages.TaintLevel{x}, x},
		{"external is never raised by owner context", x, []messages.TaintLevel{o, o}, x},
		{"auth is never raised by owner context", a, []messages.TaintLevel{o}, a},
		{"external first, owner after", o, []messages.TaintLevel{x, o, a}, x},
		{"empty seen level is external", o, []messages.TaintLevel{""}, x},
		{"unknown seen level is external", o, []messages.TaintLevel{"trusted"}, x},
		{"empty message taint is external", "", []messages.TaintLevel{o}, x},
		{"upper-case name is not owner", "OWNER", nil, x},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Derived(tt.message, tt.seen...); got != tt.want {
				t.Fatalf("Derived(%q, %q) = %q, want %q", tt.message, tt.seen, got, tt.want)
			}
		})
	}
}

// TestDerivedOrderIndependent checks that the result does not depend on the
// order the sources were seen in.
func TestDerivedOrderIndependent(t *testing.T) {
	levels := []messages.TaintLevel{messages.TaintOwner, messages.TaintAuth, messages.TaintExternal}
	for _, m := range levels {
		for _, a := range levels {
			for _, b := range levels {
				if Derived(m, a, b) != Derived(m, b, a) || Derived(m, a, b) != Derived(a, m, b) {
					t.Fatalf("order matters for %s, %s, %s", m, a, b)
				}
			}
		}
	}
}
