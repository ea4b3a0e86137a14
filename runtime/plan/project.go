package plan

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/silas-ai/silas/messages"
)

// A project (spec 5.2.2) is one plan whose briefing holds the plans of its
// child tasks, each in a fenced block with the info string "plan":
//
//	---
//	id: project-site
//	type: project
//	title: Build the site
//	tasks: [task-a, task-b]
//	---
//
//	# Overview
//	...
//
//	```plan
//	---
//	id: task-a
//	type: task
//	title: ...
//	---
//	...
//	```
//
// Because the children are part of the project's briefing, the project's
// plan hash covers every one of them: approving the project approves
// exactly these tasks, and a task runs under the project's approval only
// when its plan hash matches the one parsed from the approved briefing.

// maxProjectTasks bounds the tasks of one project.
const maxProjectTasks = 32

// Tasks parses the child tasks of project p from its briefing and returns
// them in an order that respects depends_on (a topological order, ties
// kept in the order of p.tasks). Each child inherits p's skills and gets p
// as its parent; it must be a task, its id listed in p.tasks, and its
// depends_on must name sibling tasks without a cycle (and include the
// sibling it follows up, if any). The task ids must be
// exactly p.tasks. Errors match ErrInvalidPlan.
func Tasks(p *messages.WorkItem) ([]*messages.WorkItem, error) {
	if p.Type != messages.WorkProject {
		return nil, &Error{Field: "type", Err: fmt.Errorf("%s is a %s, not a project", p.ID, p.Type)}
	}
	blocks, err := planBlocks(p.Body)
	if err != nil {
		return nil, err
	}
	if len(blocks) == 0 {
		return nil, &Error{Field: "tasks", Err: errors.New("a project holds its tasks' plans in ```plan blocks of its briefing; none was found")}
	}
	if len(blocks) > maxProjectTasks {
		return nil, &Error{Field: "tasks", Err: fmt.Errorf("%d tasks; a project holds at most %d", len(blocks), maxProjectTasks)}
	}
	byID := make(map[string]*messages.WorkItem, len(blocks))
	for i, b := range blocks {
		child, err := ParseWithParent(b, p)
		if err != nil {
			return nil, &Error{Field: fmt.Sprintf("tasks[%d]", i), Err: fmt.Errorf("the plan block of task %d: %w", i+1, err)}
		}
		if child.Type != messages.WorkTask {
			return nil, &Error{Field: "tasks", Err: fmt.Errorf("%s is a %s; a project's children are tasks", child.ID, child.Type)}
		}
		if _, dup := byID[child.ID]; dup || child.ID == p.ID {
			return nil, &Error{Field: "tasks", Err: fmt.Errorf("task id %s is used twice", child.ID)}
		}
		byID[child.ID] = child
	}
	for _, id := range p.Tasks {
		if byID[id] == nil {
			return nil, &Error{Field: "tasks", Err: fmt.Errorf("%s is listed in tasks but has no plan block", id)}
		}
	}
	for id := range byID {
		if !slices.Contains(p.Tasks, id) {
			return nil, &Error{Field: "tasks", Err: fmt.Errorf("the plan block of %s is not listed in tasks; add it", id)}
		}
	}
	for _, id := range p.Tasks {
		// A follow-up imports its sibling's files (spec 5.2.1 step 0.5), so
		// it must run after it.
		t := byID[id]
		if f := t.FollowUpOf; f != nil && byID[*f] != nil && !slices.Contains(t.DependsOn, *f) {
			return nil, &Error{Field: "tasks", Err: fmt.Errorf("%s follows up %s but does not depend on it; add %s to its depends_on", id, *f, *f)}
		}
	}
	return topoOrder(p.Tasks, byID)
}

// topoOrder orders the tasks so that each comes after what it depends on;
// among the tasks that are ready, the one listed first goes first.
func topoOrder(order []string, byID map[string]*messages.WorkItem) ([]*messages.WorkItem, error) {
	for _, id := range order {
		for _, dep := range byID[id].DependsOn {
			if byID[dep] == nil {
				return nil, &Error{Field: "tasks", Err: fmt.Errorf("%s depends on %s, which is not a task of this project", id, dep)}
			}
		}
	}
	done := make(map[string]bool, len(order))
	out := make([]*messages.WorkItem, 0, len(order))
	for len(out) < len(order) {
		progressed := false
		for _, id := range order {
			if done[id] {
				continue
			}
			ready := true
			for _, dep := range byID[id].DependsOn {
				ready = ready && done[dep]
			}
			if ready {
				done[id] = true
				out = append(out, byID[id])
				progressed = true
				break
			}
		}
		if !progressed {
			var left []string
			for _, id := range order {
				if !done[id] {
					left = append(left, id)
				}
			}
			return nil, &Error{Field: "tasks", Err: fmt.Errorf("the depends_on of %s form a cycle", strings.Join(left, ", "))}
		}
	}
	return out, nil
}

// planBlocks returns the contents of the fenced blocks with the info
// string "plan" in body. A fence is three or more backticks or tildes; the
// block ends at a line of the same fence character at least as long.
func planBlocks(body string) ([]string, error) {
	var out []string
	lines := strings.Split(body, "\n")
	for i := 0; i < len(lines); i++ {
		fence, info := openFence(lines[i])
		if fence == "" {
			continue
		}
		end := -1
		for j := i + 1; j < len(lines); j++ {
			if closesFence(lines[j], fence) {
				end = j
				break
			}
		}
		if end < 0 {
			if info == "plan" {
				return nil, &Error{Field: "tasks", Err: errors.New("a ```plan block is not closed")}
			}
			break
		}
		if info == "plan" {
			out = append(out, strings.Join(lines[i+1:end], "\n"))
		}
		i = end
	}
	return out, nil
}

// openFence reports the fence and info string of a line that opens a
// fenced block; fence is empty for other lines.
func openFence(line string) (fence, info string) {
	s := strings.TrimRight(strings.TrimLeft(line, " "), " \t")
	if len(line)-len(strings.TrimLeft(line, " ")) > 3 || len(s) < 3 || (s[0] != '`' && s[0] != '~') {
		return "", ""
	}
	n := 0
	for n < len(s) && s[n] == s[0] {
		n++
	}
	if n < 3 {
		return "", ""
	}
	return s[:n], strings.TrimSpace(s[n:])
}

// closesFence reports whether line closes a block opened with fence.
func closesFence(line, fence string) bool {
	s := strings.TrimSpace(line)
	return len(s) >= len(fence) && strings.Trim(s, fence[:1]) == "" && s[0] == fence[0]
}
