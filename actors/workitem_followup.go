package actors

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/silas-ai/silas/messages"
)

// Follow-up artifact hydration (spec 5.2.1 step 0.5): a work item whose
// follow_up_of names an earlier work item imports the artifacts that
// input_artifacts_from lists (["*"]: all of them) into the work dir of
// each of its attempts. The earlier item's files must still exist: a task
// of a project can import from a task of the same project that finished
// done (the project keeps their files until it ends); a finished work item
// outside a project leaves the store and keeps no files, so importing from
// one blocks with a linkage error. A follow-up that imports nothing needs
// nothing from the earlier item and runs as it is.

// errFollowUp marks a linkage error of step 0.5: the work item is blocked.
var errFollowUp = errors.New("follow-up linkage")

// followUpInputs resolves the artifacts w imports: paths relative to the
// work dir, sorted. prior holds the artifacts of each earlier work item
// whose files are kept, by id; nil outside a project.
func followUpInputs(w *messages.WorkItem, prior map[string][]string) ([]string, error) {
	if w.FollowUpOf == nil || len(w.InputArtifactsFrom) == 0 {
		return nil, nil
	}
	from := *w.FollowUpOf
	names, ok := prior[from]
	if !ok {
		if prior == nil {
			return nil, fmt.Errorf("%w: the plan imports artifacts of %s, but a finished work item outside a project keeps no files; plan both as tasks of one project, or have this plan produce the files itself", errFollowUp, from)
		}
		return nil, fmt.Errorf("%w: the plan imports artifacts of %s, which is not a task of this project that finished done; make this task depend on it", errFollowUp, from)
	}
	if len(w.InputArtifactsFrom) == 1 && w.InputArtifactsFrom[0] == "*" {
		out := slices.Clone(names)
		slices.Sort(out)
		return out, nil
	}
	var out, missing []string
	for _, k := range w.InputArtifactsFrom {
		rel := filepath.Clean(strings.TrimPrefix(strings.TrimSpace(k), "./"))
		if !filepath.IsLocal(rel) || !slices.Contains(names, rel) {
			missing = append(missing, k)
			continue
		}
		out = append(out, rel)
	}
	if len(missing) > 0 {
		produced := "nothing"
		if len(names) > 0 {
			produced = strings.Join(names, ", ")
		}
		return nil, fmt.Errorf("%w: %s did not produce %s (it produced %s)", errFollowUp, from, strings.Join(missing, ", "), produced)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// checkInputsKept confirms that every input is a regular file in dir,
// where the earlier work item's files are kept. dir is opened as an
// os.Root, so no path or link can reach outside it.
func checkInputsKept(dir string, inputs []string) error {
	if len(inputs) == 0 {
		return nil
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("%w: the earlier work item's files are gone (%v)", errFollowUp, err)
	}
	defer root.Close()
	var gone []string
	for _, rel := range inputs {
		if info, err := root.Lstat(rel); err != nil || !info.Mode().IsRegular() {
			gone = append(gone, rel)
		}
	}
	if len(gone) > 0 {
		return fmt.Errorf("%w: the earlier work item's files %s are no longer kept", errFollowUp, strings.Join(gone, ", "))
	}
	return nil
}

// inputsBriefing tells the executor which files it finds in its work dir.
func inputsBriefing(from string, inputs []string) string {
	return "\n\n# Input artifacts\nThese files produced by " + from + " are in your work dir: " + strings.Join(inputs, ", ")
}
