package pipeline

import (
	"fmt"
	"runtime/debug"
)

// Stage is one step of the turn pipeline. Run is called when the turn
// reaches the stage; a stage that awaits a request gets its result through
// Resume, which may await again (the route stage calls the proxy, then the
// planner).
type Stage struct {
	Step   string
	Name   string
	Run    func(t *Turn, e *Env) Effect
	Resume func(t *Turn, e *Env, r Result) Effect
}

// Effect tells the caller what a stage needs next.
type Effect struct {
	// Await is a request the caller must perform before calling Resume;
	// nil means the stage is finished.
	Await any
}

var next = Effect{}

// Stages returns the pipeline in execution order.
func Stages() []Stage { return stages }

// Advance runs stages from the turn's position until one awaits a request or
// the turn is done. It returns the awaited request, or nil when t.Done.
func Advance(t *Turn, e *Env) (req any, err error) {
	defer recoverStage(t, &err)
	for t.cursor < len(stages) {
		eff := stages[t.cursor].Run(t, e)
		if eff.Await != nil {
			return t.await(e, eff.Await), nil
		}
		t.cursor++
	}
	t.Done = true
	return nil, nil
}

// Resume hands the result of the awaited request to the current stage and
// advances.
func Resume(t *Turn, e *Env, r Result) (req any, err error) {
	if t.cursor >= len(stages) || stages[t.cursor].Resume == nil {
		return nil, fmt.Errorf("turn %s: resume at stage %q, which awaits nothing", t.ID, t.Stage())
	}
	eff, err := resumeStage(t, e, r)
	if err != nil {
		return nil, err
	}
	if eff.Await != nil {
		return t.await(e, eff.Await), nil
	}
	t.cursor++
	return Advance(t, e)
}

func resumeStage(t *Turn, e *Env, r Result) (eff Effect, err error) {
	defer recoverStage(t, &err)
	return stages[t.cursor].Resume(t, e, r), nil
}

// PanicError is a panic inside a stage, turned into an error that keeps the
// stack so the caller can log it.
type PanicError struct {
	Stage string
	Value any
	Stack []byte
}

func (p *PanicError) Error() string {
	return fmt.Sprintf("panic in stage %s: %v", p.Stage, p.Value)
}

func recoverStage(t *Turn, err *error) {
	if v := recover(); v != nil {
		*err = &PanicError{Stage: t.Stage(), Value: v, Stack: debug.Stack()}
	}
}
