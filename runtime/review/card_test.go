package review

import (
	"errors"
	"strings"
	"testing"

	"github.com/silas-ai/silas/messages"
)

func TestBuild(t *testing.T) {
	spec := Spec{
		Intent:    "# Write hello.txt\nmore lines",
		Risk:      High,
		Rationale: "You asked for hello.txt. The plan writes it in the sandbox. Then it checks it.",
		CTAs: []messages.CardCTA{
			Decline("declined", "Decline, run nothing"),
			Alternative("later", "Ask me later"),
			Approve("approved", "Approve + run plan"),
		},
		Affected: &messages.AffectedItems{Count: 1, Summary: "1 file"},
		Details:  []messages.CardDetail{{Label: "Plan", Value: "write it"}, {Label: "", Value: "dropped"}, {Label: "Empty", Value: " "}},
	}
	c, err := Build(spec)
	if err != nil {
		t.Fatal(err)
	}
	if c.Intent != "Write hello.txt" || c.RiskLevel != "high" || !c.DetailsExpanded || c.Confirmation != RungSlide {
		t.Errorf("card %+v", c)
	}
	if c.Rationale != "You asked for hello.txt. The plan writes it in the sandbox." {
		t.Errorf("rationale %q, want the first two sentences (hello.txt ends none)", c.Rationale)
	}
	var order []string
	for _, cta := range c.CTAs {
		order = append(order, cta.Role)
	}
	if strings.Join(order, ",") != "recommended,alternative,decline" {
		t.Errorf("CTA order %v", order)
	}
	if len(c.Details) != 1 || c.AffectedItems.Count != 1 {
		t.Errorf("details %v affected %v", c.Details, c.AffectedItems)
	}
	spec.Risk = Medium
	if c, _ := Build(spec); c.DetailsExpanded || c.Confirmation != RungChip {
		t.Errorf("a medium card: expanded %v, confirmation %s", c.DetailsExpanded, c.Confirmation)
	}
	spec.Risk = Irreversible
	if c, _ := Build(spec); !c.DetailsExpanded || c.Confirmation != RungWebAuthn {
		t.Errorf("an irreversible card: expanded %v, confirmation %s", c.DetailsExpanded, c.Confirmation)
	}
}

func TestBuildRefusesIncompleteCards(t *testing.T) {
	ok := Spec{Intent: "x", Risk: Low, Rationale: "y", CTAs: []messages.CardCTA{Approve("a", "Do it")}}
	tests := []struct {
		name string
		edit func(*Spec)
	}{
		{"no intent", func(s *Spec) { s.Intent = " \n " }},
		{"no rationale", func(s *Spec) { s.Rationale = "" }},
		{"no answer", func(s *Spec) { s.CTAs = nil }},
		{"an answer without a label", func(s *Spec) { s.CTAs = []messages.CardCTA{Approve("a", "")} }},
		{"an answer without a value", func(s *Spec) { s.CTAs = []messages.CardCTA{Approve("", "Do it")} }},
		{"an unknown role", func(s *Spec) { s.CTAs = []messages.CardCTA{{Answer: "a", ConsequenceLabel: "x", Role: "shiny"}} }},
		{"a risk nobody knows", func(s *Spec) { s.Risk = "severe" }},
	}
	if _, err := Build(ok); err != nil {
		t.Fatalf("the complete card: %v", err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := ok
			tt.edit(&s)
			if _, err := Build(s); !errors.Is(err, ErrCard) {
				t.Errorf("Build = %v, want ErrCard", err)
			}
		})
	}
}

func TestClip(t *testing.T) {
	long := strings.Repeat("é", 100)
	got := oneLine(long, maxIntent)
	if len(got) > maxIntent || !strings.HasSuffix(got, "…") || !strings.HasPrefix(got, "é") {
		t.Errorf("oneLine cut %q (%d bytes)", got, len(got))
	}
	if got := sentences("No end", 2, 100); got != "No end" {
		t.Errorf("sentences = %q", got)
	}
}
