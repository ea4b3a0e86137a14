package main

import (
	"context"
	"fmt"
	"io"

	"github.com/silas-ai/silas/channels/cli"
)

// runChat is `silas chat`: the CLI channel (package channels/cli) talking
// to the running daemon as the owner. A secret typed at a secure-input
// card goes to the same daemon's POST /secrets/{ref_id} (the base of the
// WebSocket URL), never over the WebSocket; stdin must be a terminal for
// that, else the card shows `silas connections secret <ref_id>`.
func runChat(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("chat", "Talk to a running Silas daemon from the terminal, as the owner.", stderr)
	var c common
	c.register(fs)
	url := fs.String("url", "", "WebSocket URL (default ws://<silas.channels.web.host>:<port>/ws)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, err := c.load(nil)
	if err != nil {
		return err
	}
	tok, err := ownerToken(cfg)
	if err != nil {
		return err
	}
	u := *url
	if u == "" {
		u = fmt.Sprintf("ws://%s/ws", cfg.Channels.Web.Addr())
	}
	return cli.Run(ctx, cli.Options{URL: u, Token: tok, In: stdin, Out: stdout, Err: stderr})
}
