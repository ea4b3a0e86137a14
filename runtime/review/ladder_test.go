package review

import (
	"errors"
	"strings"
	"testing"

	"github.com/silas-ai/silas/messages"
)

func TestCheck(t *testing.T) {
	tests := []struct {
		risk      Risk
		confirmed string
		want      error
	}{
		{Low, "", nil},
		{Medium, "", nil},
		{High, "", ErrSlideRequired},
		{High, messages.ConfirmSlide, nil},
		{High, messages.ConfirmWebAuthn, nil},
		{High, "bogus", ErrSlideRequired},
		{Irreversible, "", ErrSecurityKeyRequired},
		{Irreversible, messages.ConfirmSlide, ErrSecurityKeyRequired},
		{Irreversible, messages.ConfirmWebAuthn, nil},
		// A card whose level is unknown needs the most.
		{"", messages.ConfirmSlide, ErrSecurityKeyRequired},
		{"bogus", "", ErrSecurityKeyRequired},
	}
	for _, tt := range tests {
		err := Check(tt.risk, tt.confirmed)
		if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
			t.Errorf("Check(%q, %q) = %v, want %v", tt.risk, tt.confirmed, err, tt.want)
		}
		if err != nil && !strings.Contains(err.Error(), "Nothing ran") {
			t.Errorf("Check(%q, %q) = %q: it must say nothing ran", tt.risk, tt.confirmed, err)
		}
	}
	if err := Check(Irreversible, ""); !strings.Contains(err.Error(), "register one in the Silas app") {
		t.Errorf("the refusal %q does not say how to register a key", err)
	}
}

func TestRequired(t *testing.T) {
	for risk, want := range map[Risk]string{Low: RungTap, Medium: RungChip, High: RungSlide, Irreversible: RungWebAuthn, "": RungWebAuthn} {
		if got := Required(risk); got != want {
			t.Errorf("Required(%q) = %s, want %s", risk, got, want)
		}
	}
}
