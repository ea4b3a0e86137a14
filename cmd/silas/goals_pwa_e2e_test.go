package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/silas-ai/silas/actors"
)

// hourlyGoal is a config goal that passes and runs once an hour: nothing
// runs while the test looks at it.
const hourlyGoal = `---
id: goal-disk
type: goal
title: Check the disk
schedule: "@every 1h"
on_failure: spawn_task
failure_context: "The disk check failed: $failed_checks. Free some space."
verify:
  - name: disk_ok
    run: "true"
    expect: { exit_code: 0 }
---

Keep the disk usable.
`

// The app's Activity surface lists the goals, and its Pause and Resume
// buttons change the goal on the server, on a phone and on a desktop.
func TestPWAGoalsPauseResume(t *testing.T) {
	mock := newMock(t)
	scriptPWA(mock, helloPlan)
	dir := t.TempDir()
	ov := overrides(t, mock, dir)
	goal := filepath.Join(dir, "goal.md")
	if err := os.WriteFile(goal, []byte(hourlyGoal), 0o600); err != nil {
		t.Fatal(err)
	}
	ov["silas.active_goal"] = goal
	d := startTest(t, loadConfig(t, ov))
	const item = `#goals-list [data-goal-id="goal-disk"]`
	for _, vp := range [][2]int{{375, 812}, {1440, 900}} {
		p := openPWA(t, d.Addr(), vp[0], vp[1])
		p.login()
		p.tab("activity")
		p.waitFor("the goal in the list", hasText(item+" .goal-title", "Check the disk"))
		if !eval[bool](p, `document.querySelector('`+item+` .goal-meta').textContent.includes('@every 1h · from the config file · next check')`) {
			t.Fatalf("%s: goal line %q", p.name, eval[string](p, `document.querySelector('`+item+`').textContent`))
		}
		p.do("pause the goal", chromedp.Click(chromedp.CSS(item+" .goal-action")))
		p.waitFor("the goal paused", `document.querySelector('`+item+`').dataset.status === 'paused'`)
		if g := goalView(t, d.Addr(), "goal-disk"); g.Status != actors.GoalPaused {
			t.Fatalf("%s: after Pause the server has %+v", p.name, g)
		}
		p.screenshot("goals")
		p.do("resume the goal", chromedp.Click(chromedp.CSS(item+` .goal-action[data-action="resume"]`)))
		p.waitFor("the goal active", `document.querySelector('`+item+`').dataset.status === 'active'`)
		if g := goalView(t, d.Addr(), "goal-disk"); g.Status != actors.GoalActive || g.NextRun == nil {
			t.Fatalf("%s: after Resume the server has %+v", p.name, g)
		}
	}
}
