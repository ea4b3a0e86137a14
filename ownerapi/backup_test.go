package ownerapi

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/persistence"
)

// GET /backup streams a complete backup and audits its start and end;
// the finished entry names the checksum the client can verify.
func TestBackup(t *testing.T) {
	h := newHarness(t)
	wantError(t, h.owner("GET", "/backupx", ""), 404, messages.CodeNotFound, "no such endpoint")
	r := h.owner("GET", "/backup", "")
	if r.status != 200 || r.contentType != "application/octet-stream" || r.cacheControl != "no-store" {
		t.Fatalf("answer %d %q %q", r.status, r.contentType, r.cacheControl)
	}
	if cd := r.header["Content-Disposition"]; !regexp.MustCompile(`^attachment; filename="silas-\d{8}-\d{6}\.backup"$`).MatchString(cd) {
		t.Errorf("Content-Disposition %q", cd)
	}
	info, err := persistence.VerifyBackup(bytes.NewReader(r.body))
	if err != nil {
		t.Fatalf("the streamed backup does not verify: %v", err)
	}
	ev := h.auditEvents()
	if len(ev) != 2 || ev[0].Event != "backup_started" || ev[1].Event != "backup_finished" {
		t.Fatalf("audit %+v", ev)
	}
	var fin persistence.BackupInfo
	if err := json.Unmarshal(ev[1].Data, &fin); err != nil || fin.SHA256 != info.SHA256 || fin.Bytes != info.Bytes {
		t.Fatalf("backup_finished %s, the file holds %+v", ev[1].Data, info)
	}
}

// A backup whose start cannot be audited does not start.
func TestBackupRefusedWithoutAudit(t *testing.T) {
	h := newHarness(t)
	if err := h.db.Close(); err != nil {
		t.Fatal(err)
	}
	r := h.owner("GET", "/backup", "")
	wantError(t, r, 503, messages.CodeUnavailable, "")
	if !strings.Contains(string(r.body), "the backup was not started because its audit entry could not be written: ") {
		t.Fatalf("body %s", r.body)
	}
}
