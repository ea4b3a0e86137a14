// Package plan parses the planner's plan markdown (spec 7.2) into a
// messages.WorkItem.
//
// A plan is a YAML front matter block between two "---" lines, holding the
// work item's fields under their spec names, followed by the markdown
// briefing, which becomes WorkItem.Body:
//
//	---
//	id: task-4f1c
//	type: task
//	title: Fix the failing unit tests
//	skills: [coding]
//	budget: { max_tokens: 200000, max_cost_usd: 2.00 }
//	verify:
//	  - name: tests pass
//	    run: "go test ./..."
//	    expect: { exit_code: 0 }
//	---
//
//	# Context
//	...
//
// The parser is strict: unknown keys are errors that suggest the nearest
// known key, values must have the field's type, and fields the runtime
// manages (approval_token, needs_approval, status, attempts, budget_used,
// verification_results, created_at) cannot be set by a plan. Every error is
// a *Error naming the plan line and the field, so the planner can fix it.
// Absent fields take the spec's defaults; the result passes
// WorkItem.Validate and has a computable plan hash.
//
// Who wrote a plan decides what it may declare (see origin.go): Parse and
// ParseWithParent read the planner model's plans and refuse every gate that
// runs a host command (provider script or custom, type custom_check, a
// check_command) with ErrOwnerOnlyGate; ParseOwner and ParseGoal read the
// owner's goal file, which may declare them.
//
// Card builds what the owner is shown before approving a plan: every field
// the approval token signs, and for a project each task's own fields.
//
// A project (type project) holds the plans of its child tasks in ```plan
// blocks of its briefing, so that its plan hash covers them; Parse checks
// them and Tasks returns them in dependency order (see project.go).
//
// ParseGoal reads a scheduled goal (silas.active_goal) and FixTask builds
// the fix task a goal spawns when its checks fail (spec 5.2.3), the task a
// goal's standing approval token authorizes.
package plan
