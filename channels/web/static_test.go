package web

import (
	"io/fs"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// get runs the static handler on one request.
func get(t *testing.T, h fasthttp.RequestHandler, path string, header ...string) *fasthttp.Response {
	t.Helper()
	var ctx fasthttp.RequestCtx
	ctx.Request.Header.SetMethod(fasthttp.MethodGet)
	ctx.Request.SetRequestURI(path)
	for i := 0; i+1 < len(header); i += 2 {
		ctx.Request.Header.Set(header[i], header[i+1])
	}
	h(&ctx)
	resp := &fasthttp.Response{}
	ctx.Response.CopyTo(resp)
	return resp
}

func TestStaticServesTheApp(t *testing.T) {
	h := Static()
	tests := []struct {
		path, ctype, cache string
	}{
		{"/", "text/html; charset=utf-8", "no-store"},
		{"/index.html", "text/html; charset=utf-8", "no-store"},
		{"/sw.js", "text/javascript; charset=utf-8", "no-store"},
		{"/app.js", "text/javascript; charset=utf-8", "no-cache"},
		{"/js/review.js", "text/javascript; charset=utf-8", "no-cache"},
		{"/style.css", "text/css; charset=utf-8", "no-cache"},
		{"/manifest.webmanifest", "application/manifest+json", "no-cache"},
		{"/icons/icon.svg", "image/svg+xml", "no-cache"},
		{"/icons/icon-192.png", "image/png", "no-cache"},
		{"/icons/icon-512.png", "image/png", "no-cache"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			r := get(t, h, tt.path)
			if r.StatusCode() != fasthttp.StatusOK {
				t.Fatalf("status %d", r.StatusCode())
			}
			if got := string(r.Header.ContentType()); got != tt.ctype {
				t.Errorf("Content-Type %q, want %q", got, tt.ctype)
			}
			if got := string(r.Header.Peek("Cache-Control")); got != tt.cache {
				t.Errorf("Cache-Control %q, want %q", got, tt.cache)
			}
			csp := string(r.Header.Peek("Content-Security-Policy"))
			if !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe") || !strings.Contains(csp, "default-src 'none'") {
				t.Errorf("Content-Security-Policy %q is not strict", csp)
			}
			if string(r.Header.Peek("X-Content-Type-Options")) != "nosniff" {
				t.Error("no X-Content-Type-Options: nosniff")
			}
			if len(r.Body()) == 0 {
				t.Error("empty body")
			}
		})
	}
}

func TestStaticRevalidatesByETag(t *testing.T) {
	h := Static()
	first := get(t, h, "/style.css")
	etag := string(first.Header.Peek("ETag"))
	if etag == "" {
		t.Fatal("no ETag on /style.css")
	}
	if r := get(t, h, "/style.css", "If-None-Match", `"other", `+etag); r.StatusCode() != fasthttp.StatusNotModified || len(r.Body()) != 0 {
		t.Errorf("matching If-None-Match: status %d, %d body bytes; want 304 and none", r.StatusCode(), len(r.Body()))
	}
	if r := get(t, h, "/style.css", "If-None-Match", `"other"`); r.StatusCode() != fasthttp.StatusOK {
		t.Errorf("stale If-None-Match: status %d, want 200", r.StatusCode())
	}
	// The shell is never answered from a validator: it must not go stale.
	if r := get(t, h, "/index.html", "If-None-Match", "*"); r.StatusCode() != fasthttp.StatusOK {
		t.Errorf("index.html with If-None-Match: status %d, want 200", r.StatusCode())
	}
}

func TestStaticRefusesUnknownPaths(t *testing.T) {
	h := Static()
	for _, p := range []string{"/nope", "/app", "/js/", "/../static.go", "/static.go", "/app/index.html", "/index.html/"} {
		r := get(t, h, p)
		if r.StatusCode() != fasthttp.StatusNotFound {
			t.Errorf("%s: status %d, want 404", p, r.StatusCode())
		}
		if !strings.Contains(string(r.Body()), `"code":"not_found"`) {
			t.Errorf("%s: body %q, want the JSON not_found error", p, r.Body())
		}
	}
}

// The CSP forbids inline script; the shell must not need any, and no
// module may turn strings into markup (the model's text is never HTML).
func TestAppHasNoInlineScriptOrRawHTML(t *testing.T) {
	index, err := fs.ReadFile(appFS, "app/index.html")
	if err != nil {
		t.Fatal(err)
	}
	for _, tag := range regexp.MustCompile(`(?is)<script\b[^>]*>(.*?)</script>`).FindAllStringSubmatch(string(index), -1) {
		if !strings.Contains(tag[0], `src="`) || strings.TrimSpace(tag[1]) != "" {
			t.Errorf("inline script in index.html: %s", tag[0])
		}
	}
	if m := regexp.MustCompile(`(?i)\s(on[a-z]+|style)\s*=`).FindString(string(index)); m != "" {
		t.Errorf("index.html has an inline handler or style attribute: %q", m)
	}
	forbidden := regexp.MustCompile(`innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function\(`)
	err = fs.WalkDir(appFS, "app", func(p string, d fs.DirEntry, err error) error {
		if err != nil || !strings.HasSuffix(p, ".js") {
			return err
		}
		b, err := fs.ReadFile(appFS, p)
		if err != nil {
			return err
		}
		if m := forbidden.Find(b); m != nil {
			t.Errorf("%s uses %s", p, m)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The service worker's offline shell must list every module the app loads,
// or the app cannot start offline.
func TestServiceWorkerCachesTheWholeShell(t *testing.T) {
	sw, err := fs.ReadFile(appFS, "app/sw.js")
	if err != nil {
		t.Fatal(err)
	}
	var shell []string
	for _, m := range regexp.MustCompile(`'(/[^']*)'`).FindAllStringSubmatch(string(sw), -1) {
		shell = append(shell, m[1])
	}
	assets, err := loadAssets(appFS, "app")
	if err != nil {
		t.Fatal(err)
	}
	for p := range assets {
		if p != "/sw.js" && !slices.Contains(shell, p) {
			t.Errorf("sw.js does not cache %s", p)
		}
	}
	for _, p := range shell {
		if p != "/" && assets[p] == nil {
			t.Errorf("sw.js caches %s, which is not served", p)
		}
	}
}
