package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"golang.org/x/sys/unix"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/ownerapi"
)

const connectionsUsage = `Usage: silas connections <list|show|add|check|remove|secret> [flags]

Connections let Silas reach outside services through connection skills
(spec 2.5, docs/connections.md). Adding one runs the skill's discovery and
puts a "Connect to ...?" card in the app's Review and in ` + "`silas chat`" + `; the
sign-in (a device code, a browser sign-in or a secret you type into the
secure form) follows there once you approve. Credentials never pass
through the chat, the logs or the model. The commands talk to the running
daemon: start it with "silas serve" first.

  silas connections list                     every connection and its status
  silas connections show <id>                one connection
  silas connections add <skill> [--name N] [--setting key=value ...] [--permission observe|draft|act|manage]
                                             propose a connection through a connection skill
  silas connections check <id>               run its health check now
  silas connections remove <id>              stop it, delete its credential and record
  silas connections secret <ref_id>          type a secret a setup asks for (no echo), instead of the app's form
`

// settingFlags collects --setting key=value flags.
type settingFlags map[string]any

func (s settingFlags) String() string { return "" }

func (s settingFlags) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok || k == "" {
		return fmt.Errorf("want key=value, got %q", v)
	}
	s[k] = val
	return nil
}

type listFlags []string

func (l *listFlags) String() string     { return strings.Join(*l, ",") }
func (l *listFlags) Set(v string) error { *l = append(*l, v); return nil }

func runConnections(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stderr, connectionsUsage)
		if len(args) == 0 {
			return &exitError{code: 2, err: errors.New("connections: no subcommand given")}
		}
		return nil
	}
	sub, rest := args[0], args[1:]
	fs := newFlagSet("connections "+sub, "Manage service connections through the running daemon.", stderr)
	var c common
	c.register(fs)
	daemonURL := fs.String("url", "", "daemon URL (default http://<silas.channels.web.host>:<port>)")
	name := fs.String("name", "", "add: the connection's label")
	settings := settingFlags{}
	fs.Var(settings, "setting", "add: a non-secret setting key=value (repeatable), such as client_id or an endpoint")
	var perms listFlags
	fs.Var(&perms, "permission", "add: a permission tier Silas may use (repeatable; default observe)")
	asJSON := fs.Bool("json", false, "print the daemon's JSON answer")
	pos, err := parseInterspersed(fs, rest)
	if err != nil {
		return err
	}
	want := map[string]string{"list": "", "show": "<id>", "add": "<skill>", "check": "<id>", "remove": "<id>", "secret": "<ref_id>"}
	usage, known := want[sub]
	switch {
	case !known:
		fmt.Fprint(stderr, connectionsUsage)
		return &exitError{code: 2, err: fmt.Errorf("unknown connections subcommand %q", sub)}
	case usage == "" && len(pos) != 0:
		return &exitError{code: 2, err: fmt.Errorf("connections %s takes no arguments", sub)}
	case usage != "" && len(pos) != 1:
		return &exitError{code: 2, err: fmt.Errorf("usage: silas connections %s %s", sub, usage)}
	}
	_, tok, base, err := daemonAddress(&c, *daemonURL)
	if err != nil {
		return err
	}
	cl := &daemonClient{base: base, token: tok, http: &http.Client{Timeout: skillsClientTimeout}}
	out := &skillsOut{w: stdout, json: *asJSON}
	var one messages.ConnectionSummary
	switch sub {
	case "list":
		var r ownerapi.ConnectionsResponse
		if err := cl.call(ctx, "GET", "/connections", nil, &r, out); err != nil {
			return err
		}
		return printConnections(out, r.Connections)
	case "show":
		err = cl.call(ctx, "GET", "/connections/"+url.PathEscape(pos[0]), nil, &one, out)
	case "add":
		ps := make([]messages.ConnectionPermission, 0, len(perms))
		for _, p := range perms {
			ps = append(ps, messages.ConnectionPermission(p))
		}
		err = cl.call(ctx, "POST", "/connections", ownerapi.ConnectionBody{Skill: pos[0], Name: *name, Settings: settings, Permissions: ps}, &one, out)
		if err == nil && !out.json {
			fmt.Fprintf(stdout, "proposed %s (%s): approve the \"Connect to ...?\" card in the Silas app or `silas chat` to sign in\n", one.ConnectionID, one.Name)
			return nil
		}
	case "check":
		err = cl.call(ctx, "POST", "/connections/"+url.PathEscape(pos[0])+"/check", nil, &one, out)
	case "remove":
		err = cl.call(ctx, "DELETE", "/connections/"+url.PathEscape(pos[0]), nil, &one, out)
		if err == nil && !out.json {
			fmt.Fprintf(stdout, "removed %s (%s); its credential is deleted\n", one.ConnectionID, one.Name)
			return nil
		}
	case "secret":
		return typeSecret(ctx, cl, out, pos[0], stdin, stderr)
	}
	if err != nil {
		return err
	}
	return printConnections(out, []messages.ConnectionSummary{one})
}

func printConnections(out *skillsOut, cs []messages.ConnectionSummary) error {
	if out.json {
		return nil
	}
	tw := tabwriter.NewWriter(out.w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tSKILL\tSTATUS\tACCOUNT\tPERMISSIONS\tLAST CHECK\tPROBLEM")
	for _, c := range cs {
		last := "-"
		if c.LastHealthCheck != nil {
			last = c.LastHealthCheck.Local().Format(time.DateTime)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.ConnectionID, c.Name, c.SkillName, c.Status, dash(c.Account),
			dash(strings.Join(c.PermissionsGranted, ",")), last, dash(clip(c.LastError, 60)))
	}
	return tw.Flush()
}

// typeSecret reads a secret from the terminal without echo and posts it
// to the daemon's secure-input endpoint; it never passes through argv,
// the environment or the chat.
func typeSecret(ctx context.Context, cl *daemonClient, out *skillsOut, ref string, stdin io.Reader, stderr io.Writer) error {
	fmt.Fprintf(stderr, "Secret for %s (not shown): ", ref)
	value, err := readNoEcho(stdin)
	fmt.Fprintln(stderr)
	if err != nil {
		return err
	}
	defer clear(value)
	if len(value) == 0 {
		return &exitError{code: 2, err: errors.New("no secret typed; nothing was sent")}
	}
	var r struct {
		Stored bool `json:"stored"`
	}
	if err := cl.call(ctx, "POST", "/secrets/"+url.PathEscape(ref), ownerapi.SecretRequest{Value: string(value)}, &r, &skillsOut{w: io.Discard}); err != nil {
		return err
	}
	return out.line("stored; the setup goes on in the app or `silas chat`")
}

// readNoEcho reads one line; when stdin is a terminal, echo is off while
// it is typed.
func readNoEcho(stdin io.Reader) ([]byte, error) {
	if f, ok := stdin.(*os.File); ok {
		fd := int(f.Fd())
		if t, err := unix.IoctlGetTermios(fd, unix.TCGETS); err == nil {
			quiet := *t
			quiet.Lflag &^= unix.ECHO
			if err := unix.IoctlSetTermios(fd, unix.TCSETS, &quiet); err == nil {
				defer func() { _ = unix.IoctlSetTermios(fd, unix.TCSETS, t) }()
			}
		}
	}
	line, err := bufio.NewReaderSize(stdin, 64<<10).ReadBytes('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("read the secret: %w", err)
	}
	return []byte(strings.TrimRight(string(line), "\r\n")), nil
}
