package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/silas-ai/silas/messages"
)

// A secret the owner types into `silas chat` goes where the app's secure
// form sends it (spec 5.10.1): POST /secrets/{ref_id} on the daemon, with
// the owner token, over HTTPS or to loopback only. The WebSocket carries
// only secure_input_completed {ref_id, success}; the value is never
// printed, logged or put in a frame.

const (
	secretTimeout = 30 * time.Second
	// maxSecretBytes is the daemon's limit (ownerapi/secrets.go).
	maxSecretBytes = 16 << 10
)

// errSecretGone means the daemon has no pending request for the ref_id
// any more (answered elsewhere, cancelled or expired): the card is closed.
var errSecretGone = errors.New("the secure input request is no longer pending")

// secretClient posts secrets to the daemon's secure-input endpoint.
type secretClient struct {
	base  string // http(s)://host[:port][/prefix], without a trailing slash
	token string
	http  *http.Client
}

// newSecretClient returns the client of the secure endpoint the options
// name, or nil and why a secret cannot be typed into this session.
func newSecretClient(o Options) (*secretClient, string) {
	if !o.Terminal.IsTerminal() {
		return nil, "standard input is not a terminal, and the CLI reads a secret only from a terminal, without echo"
	}
	base, err := secretsBase(o)
	if err != nil {
		return nil, err.Error()
	}
	return &secretClient{base: base, token: o.Token, http: &http.Client{
		Timeout: secretTimeout,
		// A redirect would send the secret on to an address nobody
		// checked.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}, ""
}

// secretsBase is the daemon's HTTP base: Options.SecretsURL, or the
// WebSocket URL with http(s) for ws(s) and without its final /ws. Plain
// http is refused unless the daemon is on loopback.
func secretsBase(o Options) (string, error) {
	raw := o.SecretsURL
	if raw == "" {
		raw = o.URL
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("the daemon's URL %q does not parse: %w", raw, err)
	}
	switch u.Scheme {
	case "ws":
		u.Scheme = "http"
	case "wss":
		u.Scheme = "https"
	}
	if o.SecretsURL == "" {
		u.Path = strings.TrimSuffix(u.Path, "/ws")
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return "", fmt.Errorf("the daemon's URL %q is not http(s)", raw)
	case u.RawQuery != "" || u.User != nil:
		return "", fmt.Errorf("the daemon's URL %q carries credentials or a query", raw)
	case u.Scheme == "http" && !isLoopback(u.Hostname()):
		return "", fmt.Errorf("the daemon is reached over plain http on %s, where the secret could be read on the way (use wss://)", u.Host)
	}
	u.RawPath, u.Fragment = "", ""
	return strings.TrimRight(u.String(), "/"), nil
}

// store posts value as the secret of ref. An error never quotes the value.
func (c *secretClient) store(ctx context.Context, ref string, value []byte) error {
	if !utf8.Valid(value) {
		return errors.New("it is not valid UTF-8 text")
	}
	if len(value) > maxSecretBytes {
		return fmt.Errorf("it is longer than %d bytes", maxSecretBytes)
	}
	body, err := json.Marshal(struct {
		Value string `json:"value"`
	}{string(value)})
	if err != nil {
		return fmt.Errorf("encode the request: %w", err)
	}
	defer clear(body)
	ctx, cancel := context.WithTimeout(ctx, secretTimeout)
	defer cancel()
	endpoint := c.base + "/secrets/" + url.PathEscape(ref)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("the secure endpoint %s: %w", endpoint, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("post it to %s: %w", endpoint, err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return fmt.Errorf("read the answer of %s: %w", endpoint, err)
	}
	if resp.StatusCode == http.StatusOK {
		var r struct {
			Stored bool `json:"stored"`
		}
		if json.Unmarshal(answer, &r) != nil || !r.Stored {
			return fmt.Errorf("%s answered without confirming it stored the secret", endpoint)
		}
		return nil
	}
	var e messages.ErrorEvent
	msg := fmt.Sprintf("HTTP %d", resp.StatusCode)
	if json.Unmarshal(answer, &e) == nil && e.Message != "" {
		msg += ": " + printable(e.Message)
	}
	switch resp.StatusCode {
	case http.StatusNotFound, http.StatusConflict:
		return fmt.Errorf("%w (%s)", errSecretGone, msg)
	case http.StatusUnauthorized, http.StatusForbidden:
		return fmt.Errorf("the daemon refused the owner token (%s): check silas.channels.web.auth_token", msg)
	}
	return fmt.Errorf("the daemon did not store it (%s)", msg)
}
