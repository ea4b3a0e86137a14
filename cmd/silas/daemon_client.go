package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"syscall"
)

// daemonClient calls the running daemon's owner HTTP API, as the CLI
// commands that go through the daemon (devices, skills, connections) do.
type daemonClient struct {
	base  string
	token string
	http  *http.Client
}

// send performs one request with in as its JSON body (nil: none) and
// returns the status and at most limit bytes of the answer.
func (c *daemonClient) send(ctx context.Context, method, path string, in any, limit int64) (int, []byte, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return 0, nil, err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return 0, nil, fmt.Errorf("daemon URL %q: %w", c.base, err)
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if errors.Is(err, syscall.ECONNREFUSED) {
		return 0, nil, fmt.Errorf("silas is not running at %s: this command goes through the running daemon, which owns the database; start it with `silas serve` (or pass --url)", c.base)
	}
	if err != nil {
		return 0, nil, fmt.Errorf("call silas at %s: %w", c.base, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit))
	if err != nil {
		return 0, nil, fmt.Errorf("read the answer of %s %s: %w", method, path, err)
	}
	return resp.StatusCode, b, nil
}
