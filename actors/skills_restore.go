package actors

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/silas-ai/silas/persistence"
	"github.com/silas-ai/silas/skills"
)

// restore reads the journaled install requests off the mailbox, removes
// the staging directories no request holds, and validates each request's
// directory again; each comes back to onValidated as a restored request.
func (s *SkillInstaller) restore(c actor.Context) {
	db := s.d.DB
	if db == nil {
		return
	}
	self, root, o, log, started := c.Self(), s.d.sys.Root, s.o, s.d.Log, s.d.now()
	fail := func(err error) { root.Send(self, &installsRestored{err: err}) }
	s.d.tasks.Go("restore skill requests", func(ctx context.Context) {
		recs, err := db.SkillRequests().List(ctx)
		if err != nil {
			fail(err)
			return
		}
		keep := map[string]bool{}
		for _, r := range recs {
			if r.Stage != "" {
				keep[filepath.Clean(r.Stage)] = true
			}
		}
		if err := removeOrphanStages(o.StagingDir, keep, started); err != nil {
			log.Warn().Err(err).Str("dir", o.StagingDir).Msg("remove skill staging directories left by an earlier run")
		}
		for _, rec := range recs {
			root.Send(self, restoreRequest(ctx, o, rec, started))
		}
		root.Send(self, &installsRestored{})
	}, fail)
}

// restoreRequest validates a journaled request's directory again, unless
// its card expired while Silas was down.
func restoreRequest(ctx context.Context, o SkillInstallerOptions, rec persistence.SkillRequest, now time.Time) *installValidated {
	req := &InstallSkill{Dir: rec.Dir, Origin: rec.Origin, Name: rec.Name, workItem: rec.WorkItemID}
	var v *installValidated
	if now.Before(rec.ExpiresAt) {
		v = validateRequest(ctx, o, req)
	} else {
		v = &installValidated{}
	}
	v.req, v.stage, v.restored = req, rec.Stage, &rec
	if len(rec.Transformation) > 0 {
		var t skills.TransformationReport
		if err := json.Unmarshal(rec.Transformation, &t); err != nil && v.err == nil {
			v.err = fmt.Errorf("the journaled transformation report does not decode: %w", err)
		}
		v.trans = &t
	}
	return v
}

// removeOrphanStages deletes the entries of dir that no journaled request
// holds and that predate this start (a request being validated right now
// may be writing a newer one).
func removeOrphanStages(dir string, keep map[string]bool, before time.Time) error {
	if dir == "" {
		return nil
	}
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	var first error
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		info, err := e.Info()
		if err != nil || keep[p] || !info.ModTime().Before(before) {
			continue
		}
		if err := os.RemoveAll(p); err != nil && first == nil {
			first = err
		}
	}
	return first
}
