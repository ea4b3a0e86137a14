package ownerapi

import (
	"bufio"
	"context"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/silas-ai/silas/messages"
)

// backupStreamLimit bounds streaming one backup: the web server's write
// timeout (30 s) is for ordinary answers, not a database.
const backupStreamLimit = time.Hour

func (a *API) backupRoutes() map[string]fasthttp.RequestHandler {
	return map[string]fasthttp.RequestHandler{"GET /backup": a.backup}
}

// backup serves GET /backup (owner only): a consistent copy of the whole
// database in the format of persistence.DB.Backup, streamed while the
// daemon keeps serving. The body is complete only if it ends with the
// format's end mark and checksum; `silas backup` checks that before it
// keeps the file. Starting, finishing and failing are audited.
func (a *API) backup(ctx *fasthttp.RequestCtx) {
	if string(ctx.Path()) != "/backup" {
		WriteError(ctx, fasthttp.StatusNotFound, messages.CodeNotFound, "no such endpoint")
		return
	}
	c, cancel := reqContext()
	err := a.audit(c, "backup_started", map[string]any{"remote_ip": ctx.RemoteIP().String()})
	cancel()
	if err != nil {
		WriteError(ctx, fasthttp.StatusServiceUnavailable, messages.CodeUnavailable,
			"the backup was not started because its audit entry could not be written: "+err.Error())
		return
	}
	_ = ctx.SetWriteDeadline(time.Now().Add(backupStreamLimit))
	ctx.Response.Header.Set("Content-Disposition", `attachment; filename="silas-`+time.Now().UTC().Format("20060102-150405")+`.backup"`)
	ctx.SetContentType("application/octet-stream")
	db, audit := a.d.DB, a.audit
	ctx.SetBodyStreamWriter(func(w *bufio.Writer) {
		bc, cancel := context.WithTimeout(context.Background(), backupStreamLimit)
		defer cancel()
		info, err := db.Backup(bc, w)
		if err == nil {
			err = w.Flush()
		}
		event, data := "backup_finished", map[string]any{"bytes": info.Bytes, "sha256": info.SHA256, "version": info.Version}
		if err != nil {
			event, data = "backup_failed", map[string]any{"error": err.Error()}
		}
		ac, acancel := reqContext()
		defer acancel()
		_ = audit(ac, event, data) // the client sees a failure as a cut-short file
	})
}
