package telegram

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
)

// maxUpdatesBody bounds a getUpdates answer (100 updates).
const maxUpdatesBody = 16 << 20

// getUpdates calls getUpdates once: it confirms every update below offset,
// and returns the pending ones from offset on, waiting up to timeout for
// one. It is written here rather than taken from the library because the
// library's loop asks for the next offset, and so confirms an update to
// Telegram, before the update is handled.
func (c *Client) getUpdates(ctx context.Context, offset int64, timeout time.Duration) ([]Update, error) {
	body, err := json.Marshal(map[string]any{
		"offset":          offset,
		"timeout":         int(timeout / time.Second),
		"allowed_updates": allowedUpdates,
	})
	if err != nil {
		return nil, fmt.Errorf("telegram getUpdates: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout+c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/bot"+c.token+"/getUpdates", bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("telegram getUpdates: %w", c.redact(err))
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("telegram getUpdates: %w", c.redact(err))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxUpdatesBody))
	if err != nil {
		return nil, fmt.Errorf("telegram getUpdates: read answer: %w", c.redact(err))
	}
	var r struct {
		OK          bool              `json:"ok"`
		Result      []json.RawMessage `json:"result"`
		ErrorCode   int               `json:"error_code"`
		Description string            `json:"description"`
		Parameters  struct {
			RetryAfter int `json:"retry_after"`
		} `json:"parameters"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("telegram getUpdates: HTTP %d with an answer that is not the Bot API's JSON: %w", resp.StatusCode, err)
	}
	if !r.OK {
		code := r.ErrorCode
		if code == 0 {
			code = resp.StatusCode
		}
		return nil, &APIError{Method: "getUpdates", Code: code, Description: r.Description,
			RetryAfter: time.Duration(r.Parameters.RetryAfter) * time.Second}
	}
	ups := make([]Update, 0, len(r.Result))
	for _, raw := range r.Result {
		u, err := parseUpdate(raw)
		if err != nil {
			return nil, fmt.Errorf("telegram getUpdates: %w", err)
		}
		ups = append(ups, u)
	}
	return ups, nil
}

// redact removes the bot token from err's text: net/http puts the request
// URL, token included, into its errors.
func (c *Client) redact(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		cp := *ue
		cp.URL = strings.ReplaceAll(cp.URL, c.token, "<token>")
		return &cp
	}
	if strings.Contains(err.Error(), c.token) {
		return errors.New(strings.ReplaceAll(err.Error(), c.token, "<token>"))
	}
	return err
}
