package plan

import "github.com/silas-ai/silas/messages"

// Card returns what the owner is shown before approving w: every field the
// approval token signs (messages.NewPlanCard) and, for a project, the card
// of each task in the order they run. A project whose tasks cannot be read
// gets no task cards; its briefing, which holds every task's plan and is
// on the card in full, still shows them, and such a project cannot run.
func Card(w *messages.WorkItem) messages.PlanCard {
	c := messages.NewPlanCard(w)
	if w.Type != messages.WorkProject {
		return c
	}
	tasks, err := Tasks(w)
	if err != nil {
		return c
	}
	c.TaskPlans = make([]messages.PlanCard, 0, len(tasks))
	for _, t := range tasks {
		c.TaskPlans = append(c.TaskPlans, messages.NewPlanCard(t))
	}
	return c
}
