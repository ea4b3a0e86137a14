package fakebot

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// maxBody bounds a request body; Telegram's own limit for text methods is
// far below it.
const maxBody = 10 << 20

// params holds a request's parameters by name. Telegram accepts them as a
// query string, as application/x-www-form-urlencoded, as multipart/form-data
// and as a JSON object, so the fake does too: clients differ in what they use
// (the go-telegram/bot library sends multipart, Silas's getUpdates sends
// JSON).
type params map[string]string

// readParams reads r's parameters and returns them with the raw body.
func readParams(r *http.Request) (params, []byte, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return nil, nil, fmt.Errorf("read body: %w", err)
	}
	if len(body) > maxBody {
		return nil, nil, fmt.Errorf("body over %d bytes", maxBody)
	}
	p := params{}
	for k, v := range r.URL.Query() {
		if len(v) > 0 {
			p[k] = v[0]
		}
	}
	ct, ctParams, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch {
	case len(body) == 0:
	case ct == "application/json":
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(body, &obj); err != nil {
			return nil, nil, fmt.Errorf("decode JSON body: %w", err)
		}
		for k, raw := range obj {
			var s string
			if json.Unmarshal(raw, &s) == nil {
				p[k] = s
				continue
			}
			p[k] = string(raw)
		}
	case ct == "multipart/form-data":
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.Header.Set("Content-Type", mime.FormatMediaType(ct, ctParams))
		if err := r.ParseMultipartForm(maxBody); err != nil {
			return nil, nil, fmt.Errorf("parse multipart body: %w", err)
		}
		for k, v := range r.MultipartForm.Value {
			if len(v) > 0 {
				p[k] = v[0]
			}
		}
	default:
		vals, err := url.ParseQuery(string(body))
		if err != nil {
			return nil, nil, fmt.Errorf("parse form body: %w", err)
		}
		for k, v := range vals {
			if len(v) > 0 {
				p[k] = v[0]
			}
		}
	}
	return p, body, nil
}

// int64 returns the integer parameter name; ok is false when it is absent.
func (p params) int64(name string) (v int64, ok bool, err *apiError) {
	s, ok := p[name]
	if !ok || strings.TrimSpace(s) == "" {
		return 0, false, nil
	}
	v, perr := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if perr != nil {
		return 0, true, badRequest("invalid " + name + " specified")
	}
	return v, true, nil
}

// bool returns the boolean parameter name (absent is false).
func (p params) bool(name string) bool {
	v := strings.ToLower(strings.TrimSpace(p[name]))
	return v == "true" || v == "1"
}
