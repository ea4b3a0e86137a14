package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"syscall"
	"time"

	"github.com/fasthttp/websocket"
	"github.com/google/uuid"
)

// DefaultURL is the WebSocket endpoint of a local `silas serve`.
const DefaultURL = "ws://127.0.0.1:8420/ws"

// CloseUnauthorized is the WebSocket close code the server sends when the
// auth token is missing or wrong (spec 8.1).
const CloseUnauthorized = 4001

const (
	handshakeTimeout = 10 * time.Second
	writeTimeout     = 10 * time.Second
	// closeWait bounds how long a failed write waits for the reader to
	// report why the connection broke.
	closeWait     = 2 * time.Second
	maxFrameBytes = 4 << 20
)

// Options configure Run.
type Options struct {
	// URL is the server's WebSocket endpoint; empty means DefaultURL.
	URL string
	// Token is the web channel auth token (silas.channels.web.auth_token),
	// sent as the first message, never in the URL. Empty sends no auth
	// message, for a loopback server without a token.
	Token string
	// AllowInsecureRemote permits sending Token over ws:// to a host other
	// than loopback, where anyone on the path can read it. Default false.
	AllowInsecureRemote bool
	// In supplies chat lines and approval answers; nil means os.Stdin.
	In io.Reader
	// Out receives answers and prompts; nil means os.Stdout.
	Out io.Writer
	// Err receives errors and notices; nil means os.Stderr.
	Err io.Writer
	// Terminal is the terminal behind In, which turns echo off while a
	// secret is typed; nil means In's own terminal when In is an *os.File
	// that is one. Without a terminal the CLI reads no secret: a
	// secure-input card shows the `silas connections secret` command.
	Terminal Terminal
	// SecretsURL is the daemon's HTTP base URL, where a typed secret is
	// posted (POST /secrets/{ref_id}, the app's secure form); empty
	// derives it from URL (http for ws, https for wss, without the final
	// /ws). Plain http is used only to a loopback address.
	SecretsURL string
}

// Run connects to silas and chats until the input ends and the last answer
// has arrived (returning nil), ctx ends (returning ctx.Err()), or the
// connection fails (an error wrapping ErrUnreachable, ErrUnauthorized or
// ErrClosed).
func Run(ctx context.Context, opts Options) error {
	opts = opts.withDefaults()
	if err := checkURL(opts); err != nil {
		return err
	}
	conn, err := dial(ctx, opts.URL)
	if err != nil {
		return err
	}
	conn.SetReadLimit(maxFrameBytes)

	s := &session{
		conn:    conn,
		opts:    opts,
		events:  make(chan event),
		readErr: make(chan error, 1),
		want:    make(chan struct{}, 1),
		lines:   make(chan inputLine),
		done:    make(chan struct{}),
	}
	s.secrets, s.noSecret = newSecretClient(opts)
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		s.readEvents()
	}()
	go readLines(opts.In, s.want, s.lines, s.done)
	defer func() {
		s.restoreEcho()
		close(s.done)
		conn.Close()
		<-readerDone
	}()

	if opts.Token != "" {
		if err := s.write(authFrame(opts.Token)); err != nil {
			return s.writeFailed(err)
		}
	}
	return s.loop(ctx)
}

func (o Options) withDefaults() Options {
	if o.URL == "" {
		o.URL = DefaultURL
	}
	if o.In == nil {
		o.In = os.Stdin
	}
	if o.Out == nil {
		o.Out = os.Stdout
	}
	if o.Err == nil {
		o.Err = os.Stderr
	}
	if o.Terminal == nil {
		o.Terminal = terminalOf(o.In)
	}
	return o
}

// checkURL rejects URLs that are not WebSocket URLs, carry a query (where a
// token must never go), or would expose the token in clear text.
func checkURL(o Options) error {
	u, err := url.Parse(o.URL)
	if err != nil {
		return fmt.Errorf("silas URL %q: %w", o.URL, err)
	}
	if u.Scheme != "ws" && u.Scheme != "wss" {
		return fmt.Errorf("silas URL %q: want ws:// or wss://", o.URL)
	}
	if u.RawQuery != "" || u.User != nil {
		return fmt.Errorf("silas URL %q: credentials and query parameters are not allowed; pass the token separately", o.URL)
	}
	if u.Scheme == "ws" && o.Token != "" && !o.AllowInsecureRemote && !isLoopback(u.Hostname()) {
		return fmt.Errorf("%w: %s (use wss://)", ErrInsecureURL, u.Host)
	}
	return nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func dial(ctx context.Context, rawURL string) (*websocket.Conn, error) {
	d := websocket.Dialer{HandshakeTimeout: handshakeTimeout, Proxy: http.ProxyFromEnvironment}
	conn, resp, err := d.DialContext(ctx, rawURL, nil)
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
	switch {
	case err == nil:
		return conn, nil
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case errors.Is(err, syscall.ECONNREFUSED):
		return nil, fmt.Errorf("%w at %s: is `silas serve` running?", ErrUnreachable, rawURL)
	case resp != nil && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden):
		return nil, fmt.Errorf("%w: HTTP %d from %s: check the auth token (silas.channels.web.auth_token)",
			ErrUnauthorized, resp.StatusCode, rawURL)
	case resp != nil:
		return nil, fmt.Errorf("websocket handshake with %s failed: HTTP %d", rawURL, resp.StatusCode)
	default:
		return nil, fmt.Errorf("%w at %s: %v", ErrUnreachable, rawURL, err)
	}
}

// newMessageID returns the id of an outgoing chat message.
func newMessageID() string { return uuid.NewString() }
