package plan

import (
	"errors"
	"fmt"

	"github.com/silas-ai/silas/messages"
)

// Origin is who wrote a plan. It decides which gates the plan may declare:
// a gate that runs a command on the host is the owner's to configure, never
// the planner model's, whose plans are shaped by whatever the model read.
type Origin int

const (
	// OriginModel is a plan the planner model proposed (a turn's plan, a
	// re-plan, a project's task plans). It is the zero value, so a caller
	// that forgets to say gets the most restricted parse.
	OriginModel Origin = iota
	// OriginOwner is a plan the owner wrote on disk: the goal file of
	// silas.active_goal.
	OriginOwner
)

// String names the origin for messages and audit entries.
func (o Origin) String() string {
	if o == OriginOwner {
		return "owner"
	}
	return "model"
}

// ErrOwnerOnlyGate is matched (errors.Is) by the parse error of a
// model-written plan that declares a gate running a host command (provider
// script or custom, type custom_check, a check_command). The caller refuses
// the plan, audits the refusal and tells the owner; it never asks for
// approval. Such a gate belongs in silas.yaml (gates.system) or an
// owner-written goal file. The error also matches ErrInvalidPlan.
var ErrOwnerOnlyGate = errors.New("a plan the planner writes cannot declare a gate that runs a command on the host; " +
	"the owner can configure such a gate in silas.yaml (gates.system) or in an owner-written goal file (silas.active_goal)")

// ownerOnly says why gate g may appear only in an owner-written plan, and
// the key that makes it so; why is "" when any plan may declare g.
func ownerOnly(g *messages.Gate) (key, why string) {
	switch {
	case g.Provider == messages.ProviderScript || g.Provider == messages.ProviderCustom:
		return "provider", fmt.Sprintf("uses provider %s", g.Provider)
	case g.Type == messages.GateCustomCheck:
		return "type", fmt.Sprintf("has type %s", g.Type)
	case g.CheckCommand != nil:
		return "check_command", "sets check_command"
	}
	return "", ""
}

// refuseOwnerOnly returns one *Error per gate of w that a plan of origin o
// may not declare, placed on the line of the key that makes it so.
func refuseOwnerOnly(w *messages.WorkItem, o Origin, d *decoder) []error {
	if o == OriginOwner {
		return nil
	}
	var errs []error
	for i := range w.Gates {
		g := &w.Gates[i]
		key, why := ownerOnly(g)
		if why == "" {
			continue
		}
		field := fmt.Sprintf("gates[%d]", i)
		line, ok := d.lines[field+"."+key]
		if !ok {
			line = d.lines[field]
		}
		errs = append(errs, &Error{Line: line, Field: field + "." + key,
			Err: fmt.Errorf("gate %q %s: %w", g.Name, why, ErrOwnerOnlyGate)})
	}
	return errs
}
