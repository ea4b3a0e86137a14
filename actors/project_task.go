package actors

import (
	"context"
	"errors"
	"fmt"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/approval"
	"github.com/silas-ai/silas/runtime/plan"
)

// checkProjectTask is the approval check (spec 5.2.1 step 0) of a task of
// a project: the task carries no token of its own and runs under its
// project's approval. That holds when the project's token passes the
// non-consuming Check for the project, the task is the project's child,
// and its plan hash is the one of the task parsed from the approved
// project's briefing (the project's plan hash covers that briefing, so the
// owner approved exactly this task).
func checkProjectTask(ctx context.Context, eng *approval.Engine, project, w *messages.WorkItem) error {
	if project.ApprovalToken == nil {
		return errors.New("the project carries no approval token")
	}
	if err := eng.Check(ctx, project.ApprovalToken, project); err != nil {
		return fmt.Errorf("the project's approval: %w", err)
	}
	if w.Parent == nil || *w.Parent != project.ID {
		return fmt.Errorf("task %s is not a task of project %s", w.ID, project.ID)
	}
	tasks, err := plan.Tasks(project)
	if err != nil {
		return fmt.Errorf("read the approved project's tasks: %w", err)
	}
	got, err := messages.WorkItemPlanHash(w)
	if err != nil {
		return fmt.Errorf("hash task %s: %w", w.ID, err)
	}
	for _, t := range tasks {
		if t.ID != w.ID {
			continue
		}
		want, err := messages.WorkItemPlanHash(t)
		if err != nil {
			return fmt.Errorf("hash approved task %s: %w", w.ID, err)
		}
		if got != want {
			return fmt.Errorf("task %s differs from the one approved with project %s", w.ID, project.ID)
		}
		return nil
	}
	return fmt.Errorf("task %s is not in the approved project %s", w.ID, project.ID)
}
