package plan

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/silas-ai/silas/messages"
)

// Declared outputs (spec 19.7). A task of a project may list the paths it
// writes for the project, relative to its work dir:
//
//	outputs: [site/index.html, assets/]
//
// The project runs its independent tasks at the same time, each in a work
// dir of its own; what a task produced reaches the project's files when it
// is done, and another task only through input_artifacts_from. Two tasks
// whose outputs overlap (the same path, or one a directory holding the
// other) never run at the same time, so their writes never interleave.
// The outputs are part of the plan hash: the owner approves them.

// Limits on a plan's outputs.
const (
	maxOutputs       = 64
	maxOutputPathLen = 256
)

// checkOutputs validates w.Outputs: only a task declares outputs; each is
// a clean relative path inside the work dir, listed once.
func checkOutputs(w *messages.WorkItem) error {
	if len(w.Outputs) == 0 {
		return nil
	}
	if w.Type != messages.WorkTask {
		return &Error{Field: "outputs", Err: fmt.Errorf("only a task declares outputs, this is a %s; declare them on its tasks", w.Type)}
	}
	if len(w.Outputs) > maxOutputs {
		return &Error{Field: "outputs", Err: fmt.Errorf("%d paths; at most %d, so name directories instead", len(w.Outputs), maxOutputs)}
	}
	seen := make(map[string]bool, len(w.Outputs))
	for i, p := range w.Outputs {
		field := fmt.Sprintf("outputs[%d]", i)
		if err := checkOutputPath(p); err != nil {
			return &Error{Field: field, Err: err}
		}
		key := strings.TrimSuffix(p, "/")
		if seen[key] {
			return &Error{Field: field, Err: fmt.Errorf("%q is listed twice; keep one", p)}
		}
		seen[key] = true
	}
	return nil
}

// checkOutputPath accepts a path relative to the work dir in its clean
// form, such as "out/a.txt", or a directory, such as "out/" or "out".
func checkOutputPath(p string) error {
	switch {
	case p == "":
		return errors.New("is empty; name a path relative to the work dir, such as out/result.txt")
	case len(p) > maxOutputPathLen:
		return fmt.Errorf("is %d characters long, at most %d", len(p), maxOutputPathLen)
	case strings.ContainsAny(p, "\x00\\*?[") || strings.ContainsFunc(p, isControl):
		return fmt.Errorf("%q: use a plain path, without wildcards, backslashes or control characters", p)
	case strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~"):
		return fmt.Errorf("%q: name a path relative to the work dir", p)
	}
	dir := strings.TrimSuffix(p, "/")
	clean := path.Clean(dir)
	if clean == "." || clean == ".." || strings.HasPrefix(clean, "../") {
		return fmt.Errorf("%q: name a path inside the work dir", p)
	}
	if clean != dir {
		return fmt.Errorf("%q: write it as %q", p, clean)
	}
	return nil
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// OutputsOverlap reports the first pair of outputs of a and b that are the
// same path, or of which one is a directory holding the other: tasks
// declaring them must not run at the same time. Both lists are assumed
// valid (checkOutputs).
func OutputsOverlap(a, b []string) (x, y string, ok bool) {
	for _, p := range a {
		for _, q := range b {
			if pathsOverlap(p, q) {
				return p, q, true
			}
		}
	}
	return "", "", false
}

// Covers reports whether path rel (relative to the work dir) is one of
// outputs, or under one of them.
func Covers(outputs []string, rel string) bool {
	for _, o := range outputs {
		o = strings.TrimSuffix(o, "/")
		if rel == o || strings.HasPrefix(rel, o+"/") {
			return true
		}
	}
	return false
}

func pathsOverlap(p, q string) bool {
	p, q = strings.TrimSuffix(p, "/"), strings.TrimSuffix(q, "/")
	return p == q || strings.HasPrefix(p, q+"/") || strings.HasPrefix(q, p+"/")
}
