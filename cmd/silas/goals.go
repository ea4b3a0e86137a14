package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"text/tabwriter"
	"time"

	"github.com/silas-ai/silas/actors"
	"github.com/silas-ai/silas/ownerapi"
)

const goalsUsage = `Usage: silas goals [list|pause|resume|remove] [<id>] [flags]

Goals are checks Silas runs on a schedule, fixing what fails within the
standing approval you gave with the goal (spec 5.2.3). Ask for one in chat
("check every hour that the site is up"): the planner proposes it and you
approve it in Review. The goal of silas.active_goal is listed too. The
commands talk to the running daemon: start it with "silas serve" first.
In chat, /goals and /goal pause|resume|remove <id> do the same.

  silas goals [list]           every goal: status, schedule, next check, standing approval
  silas goals pause <id>       no check or fix task starts until resumed
  silas goals resume <id>      back on its schedule
  silas goals remove <id>      unschedule it and forget its standing approval
`

func runGoals(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	sub, rest := "list", args
	if len(args) > 0 {
		switch args[0] {
		case "-h", "--help", "help":
			fmt.Fprint(stderr, goalsUsage)
			return nil
		case "list", "pause", "resume", "remove":
			sub, rest = args[0], args[1:]
		default:
			if args[0] == "" || args[0][0] != '-' {
				fmt.Fprint(stderr, goalsUsage)
				return &exitError{code: 2, err: fmt.Errorf("unknown goals subcommand %q", args[0])}
			}
		}
	}
	fs := newFlagSet("goals "+sub, "Manage scheduled goals through the running daemon.", stderr)
	var c common
	c.register(fs)
	daemonURL := fs.String("url", "", "daemon URL (default http://<silas.channels.web.host>:<port>)")
	asJSON := fs.Bool("json", false, "print the daemon's JSON answer")
	pos, err := parseInterspersed(fs, rest)
	if err != nil {
		return err
	}
	switch {
	case sub == "list" && len(pos) != 0:
		return &exitError{code: 2, err: fmt.Errorf("goals list takes no arguments")}
	case sub != "list" && len(pos) != 1:
		return &exitError{code: 2, err: fmt.Errorf("usage: silas goals %s <id>; `silas goals list` shows the ids", sub)}
	}
	_, tok, base, err := daemonAddress(&c, *daemonURL)
	if err != nil {
		return err
	}
	cl := &daemonClient{base: base, token: tok, http: &http.Client{Timeout: 30 * time.Second}}
	out := &skillsOut{w: stdout, json: *asJSON}
	if sub == "list" {
		var r ownerapi.GoalsResponse
		if err := cl.call(ctx, "GET", "/goals", nil, &r, out); err != nil {
			return err
		}
		if out.json {
			return nil
		}
		return printGoals(stdout, r.Goals)
	}
	method, path := "POST", "/goals/"+url.PathEscape(pos[0])+"/"+sub
	if sub == "remove" {
		method, path = "DELETE", "/goals/"+url.PathEscape(pos[0])
	}
	var g actors.GoalView
	if err := cl.call(ctx, method, path, nil, &g, out); err != nil {
		return err
	}
	switch sub {
	case "pause":
		return out.line(fmt.Sprintf("paused %s (%s); `silas goals resume %s` puts it back on its schedule", g.ID, g.Title, g.ID))
	case "resume":
		return out.line(fmt.Sprintf("resumed %s (%s): %s", g.ID, g.Title, g.Schedule))
	}
	return out.line(fmt.Sprintf("removed %s (%s) and its standing approval", g.ID, g.Title))
}

func printGoals(w io.Writer, goals []actors.GoalView) error {
	if len(goals) == 0 {
		_, err := fmt.Fprintln(w, "no scheduled goals; ask Silas for one in chat and approve it in Review")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATUS\tSCHEDULE\tNEXT CHECK\tLAST CHECK\tSTANDING\tSOURCE\tTITLE")
	for _, g := range goals {
		next := "-"
		if g.NextRun != nil {
			next = g.NextRun.Local().Format(time.DateTime)
		}
		standing := "none"
		if st := g.Standing; st != nil {
			standing = fmt.Sprintf("%d/%d until %s", st.ExecutionsUsed, st.MaxExecutions, st.ExpiresAt.Local().Format(time.DateTime))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", g.ID, g.Status, g.Schedule, next, dash(clip(g.LastOutcome, 40)), standing, g.Source, clip(g.Title, 50))
	}
	return tw.Flush()
}
