package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"text/tabwriter"
	"time"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/ownerapi"
)

const devicesUsage = `Usage: silas devices <add|list|revoke> [flags]

Owner devices are browsers or phones whose signed messages count as the
owner's own (owner taint). The commands talk to the running daemon, which
owns the database: start it with "silas serve" first.

  silas devices add [--name N] [--ttl 10m]   print a one-time enrolment code
  silas devices list                         list devices, revoked ones too
  silas devices revoke <id>                  stop trusting a device at once
`

// devicesClientTimeout bounds one call to the daemon: the device endpoints
// do a little storage work each.
const devicesClientTimeout = 10 * time.Second

func runDevices(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stderr, devicesUsage)
		if len(args) == 0 {
			return &exitError{code: 2, err: errors.New("devices: no subcommand given")}
		}
		return nil
	}
	sub, rest := args[0], args[1:]
	fs := newFlagSet("devices "+sub, "Manage owner devices through the running daemon.", stderr)
	var c common
	c.register(fs)
	daemonURL := fs.String("url", "", "daemon URL (default http://<silas.channels.web.host>:<port>)")
	name := fs.String("name", "", "add: the device's name, shown in `silas devices list`")
	ttl := fs.Duration("ttl", ownerapi.DefaultCodeTTL, "add: how long the code stays valid (1m to 24h)")
	pos, err := parseInterspersed(fs, rest)
	if err != nil {
		return err
	}
	_, tok, base, err := daemonAddress(&c, *daemonURL)
	if err != nil {
		return err
	}
	cl := &daemonClient{base: base, token: tok, http: &http.Client{Timeout: devicesClientTimeout}}

	switch sub {
	case "add":
		if len(pos) != 0 {
			return &exitError{code: 2, err: errors.New("devices add takes no arguments; name the device with --name")}
		}
		var out ownerapi.CodeResponse
		if err := cl.do(ctx, "POST", "/devices/codes", ownerapi.CodeRequest{Name: *name, TTLSeconds: int(ttl.Seconds())}, &out); err != nil {
			return err
		}
		label := ""
		if out.Name != "" {
			label = fmt.Sprintf(" for %q", out.Name)
		}
		fmt.Fprintf(stdout, "Enrolment code%s: %s\n", label, out.Code)
		fmt.Fprintf(stdout, "Enter it in the Silas web app on the device you are adding. It works once\nand expires at %s (in %s).\n",
			out.ExpiresAt.Local().Format(time.DateTime), time.Until(out.ExpiresAt).Round(time.Second))
		return nil
	case "list":
		if len(pos) != 0 {
			return &exitError{code: 2, err: errors.New("devices list takes no arguments")}
		}
		var out ownerapi.DevicesResponse
		if err := cl.do(ctx, "GET", "/devices", nil, &out); err != nil {
			return err
		}
		if len(out.Devices) == 0 {
			fmt.Fprintln(stdout, "No devices enrolled. Add one with `silas devices add --name <name>`.")
			return nil
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tNAME\tADDED\tSTATUS")
		for _, d := range out.Devices {
			status := "active"
			if d.RevokedAt != nil {
				status = "revoked " + d.RevokedAt.Local().Format(time.DateTime)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", d.ID, d.Name, d.AddedAt.Local().Format(time.DateTime), status)
		}
		return tw.Flush()
	case "revoke":
		if len(pos) != 1 {
			return &exitError{code: 2, err: errors.New("usage: silas devices revoke <id> (see `silas devices list`)")}
		}
		var out ownerapi.DeviceResponse
		if err := cl.do(ctx, "POST", "/devices/"+url.PathEscape(pos[0])+"/revoke", nil, &out); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "Revoked %s (%s): its signatures no longer count as yours.\n", out.Device.ID, out.Device.Name)
		return nil
	}
	fmt.Fprint(stderr, devicesUsage)
	return &exitError{code: 2, err: fmt.Errorf("unknown devices subcommand %q", sub)}
}

// do sends one request and decodes the answer into out; a refusal is the
// daemon's message.
func (c *daemonClient) do(ctx context.Context, method, path string, in, out any) error {
	status, b, err := c.send(ctx, method, path, in, 1<<20)
	if err != nil {
		return err
	}
	if status >= 300 {
		var e messages.ErrorEvent
		if json.Unmarshal(b, &e) == nil && e.Message != "" {
			return fmt.Errorf("silas refused: %s", e.Message)
		}
		return fmt.Errorf("%s %s: HTTP %d", method, path, status)
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("decode the answer of %s %s: %w", method, path, err)
	}
	return nil
}
