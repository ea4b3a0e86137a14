package web

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/silas-ai/silas/messages"
)

// appFS is the owner's PWA (spec 8.2): plain HTML, CSS and JavaScript
// modules, served as they are, with no build step.
//
//go:embed app
var appFS embed.FS

// contentSecurityPolicy forbids inline script and style, eval, plugins,
// framing and every origin but the server's own. 'self' in connect-src
// covers the same-origin ws:// and wss:// of /ws (CSP level 3).
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"font-src 'self'; connect-src 'self'; manifest-src 'self'; worker-src 'self'; " +
	"base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// Cache policies: the shell (index.html) and the service worker must never
// be stale, or a fixed bug stays in browsers; other assets revalidate by
// ETag, since their names carry no content hash.
const (
	cacheNoStore    = "no-store"
	cacheRevalidate = "no-cache"
)

// asset is one embedded file, ready to serve.
type asset struct {
	body        []byte
	contentType string
	cache       string
	etag        string
}

// contentTypes maps the extensions the app uses to their media types.
// A file of another type is not served, so nothing is ever sniffed.
var contentTypes = map[string]string{
	".html":        "text/html; charset=utf-8",
	".js":          "text/javascript; charset=utf-8",
	".css":         "text/css; charset=utf-8",
	".webmanifest": "application/manifest+json",
	".json":        "application/json",
	".svg":         "image/svg+xml",
	".png":         "image/png",
	".ico":         "image/x-icon",
	".txt":         "text/plain; charset=utf-8",
}

// Static returns the Options.Static handler that serves the embedded PWA:
// "/" is index.html, every other GET or HEAD names a file under app/.
// Unknown paths get the JSON 404 of the other routes.
func Static() fasthttp.RequestHandler {
	assets, err := loadAssets(appFS, "app")
	if err != nil {
		// embed.FS is read from the binary's memory; failing to read it
		// means the binary itself is broken.
		panic(fmt.Sprintf("web: read embedded app: %v", err))
	}
	return func(ctx *fasthttp.RequestCtx) {
		serveAsset(ctx, assets)
	}
}

// loadAssets reads every servable file under root of fsys, keyed by its
// URL path ("/index.html", "/js/app.js").
func loadAssets(fsys fs.FS, root string) (map[string]*asset, error) {
	assets := make(map[string]*asset)
	err := fs.WalkDir(fsys, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		ctype, ok := contentTypes[path.Ext(p)]
		if !ok {
			return nil
		}
		body, err := fs.ReadFile(fsys, p)
		if err != nil {
			return fmt.Errorf("read %s: %w", p, err)
		}
		sum := sha256.Sum256(body)
		urlPath := strings.TrimPrefix(p, root)
		a := &asset{body: body, contentType: ctype, cache: cacheRevalidate, etag: `"` + hex.EncodeToString(sum[:12]) + `"`}
		if urlPath == "/index.html" || urlPath == "/sw.js" {
			a.cache = cacheNoStore
		}
		assets[urlPath] = a
		return nil
	})
	if err != nil {
		return nil, err
	}
	if assets["/index.html"] == nil {
		return nil, fmt.Errorf("%s/index.html is missing", root)
	}
	return assets, nil
}

func serveAsset(ctx *fasthttp.RequestCtx, assets map[string]*asset) {
	p := string(ctx.Path())
	if p == "/" {
		p = "/index.html"
	}
	a := assets[p]
	if a == nil || path.Clean(p) != p {
		writeHTTPError(ctx, fasthttp.StatusNotFound, messages.CodeNotFound)
		return
	}
	h := &ctx.Response.Header
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cache-Control", a.cache)
	if a.cache == cacheNoStore {
		ctx.SetContentType(a.contentType)
		ctx.SetBody(a.body)
		return
	}
	h.Set("ETag", a.etag)
	if match := ctx.Request.Header.Peek("If-None-Match"); len(match) > 0 && etagMatches(match, a.etag) {
		ctx.SetStatusCode(fasthttp.StatusNotModified)
		return
	}
	ctx.SetContentType(a.contentType)
	ctx.SetBody(a.body)
}

// etagMatches reports whether an If-None-Match header lists etag (or "*").
func etagMatches(header []byte, etag string) bool {
	for _, part := range bytes.Split(header, []byte(",")) {
		part = bytes.TrimPrefix(bytes.TrimSpace(part), []byte("W/"))
		if string(part) == etag || string(part) == "*" {
			return true
		}
	}
	return false
}
