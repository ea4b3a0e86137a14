package plan

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/silas-ai/silas/messages"
)

// MaxPlanBytes bounds the size of a plan's markdown.
const MaxPlanBytes = 1 << 20

// runtimeManaged are the WorkItem fields a plan cannot set, with the reason
// given to the planner.
func runtimeManaged() map[string]string {
	const managed = "is managed by the runtime; remove it from the plan"
	return map[string]string{
		"approval_token":       "a plan cannot carry an approval token; the owner approves the plan after it is shown",
		"needs_approval":       managed,
		"status":               managed,
		"attempts":             managed,
		"budget_used":          managed,
		"verification_results": managed,
		"created_at":           managed,
		"ladder":               managed,
		"ledger":               managed,
		"task_status":          managed,
		"task_artifacts":       managed,
		"body":                 "the briefing is the markdown after the front matter; remove the key",
	}
}

// Parse parses a plan the planner model wrote (OriginModel), without a
// parent work item: when the plan has no skills key, the work item has no
// skills. A gate that runs a host command is refused (ErrOwnerOnlyGate);
// the owner's own goal file is read with ParseOwner.
func Parse(markdown string) (*messages.WorkItem, error) {
	return parse(markdown, nil, OriginModel)
}

// ParseOwner parses a plan the owner wrote (OriginOwner), such as the goal
// file of silas.active_goal: its gates may run host commands (provider
// script, type custom_check). The task plans inside a project's briefing
// are still held to the model's rules, since Tasks reads them again at run
// time without knowing who wrote the project.
func ParseOwner(markdown string) (*messages.WorkItem, error) {
	return parse(markdown, nil, OriginOwner)
}

// ParseWithParent parses a plan the planner model wrote for a child of
// parent (a goal or project), or for a top-level item when parent is nil.
// A plan without a skills key inherits parent's skills; an explicit list,
// even an empty one, replaces them. A plan without a parent key gets
// parent's ID; a different parent is an error. Every error is a *Error
// and matches ErrInvalidPlan; a gate that runs a host command also matches
// ErrOwnerOnlyGate.
func ParseWithParent(markdown string, parent *messages.WorkItem) (*messages.WorkItem, error) {
	return parse(markdown, parent, OriginModel)
}

// parse parses a plan of origin o for a child of parent (nil for none).
func parse(markdown string, parent *messages.WorkItem, o Origin) (*messages.WorkItem, error) {
	if len(markdown) > MaxPlanBytes {
		return nil, &Error{Err: fmt.Errorf("is %d bytes long, at most %d allowed", len(markdown), MaxPlanBytes)}
	}
	front, body, start, err := split(markdown)
	if err != nil {
		return nil, err
	}
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(front), &root); err != nil {
		return nil, yamlError(err, start)
	}
	if len(root.Content) == 0 {
		return nil, &Error{Line: start, Err: errors.New("front matter is empty; set at least id, type and title")}
	}
	d := decoder{offset: start, lines: map[string]int{}}
	tree := d.object(root.Content[0], fieldsOf(reflect.TypeFor[messages.WorkItem]()), "", runtimeManaged())
	if len(d.errs) > 0 {
		return nil, errors.Join(d.errs...)
	}
	raw, err := json.Marshal(tree)
	if err != nil {
		return nil, &Error{Line: start, Err: fmt.Errorf("front matter: %w", err)}
	}
	w := new(messages.WorkItem)
	if err := json.Unmarshal(raw, w); err != nil {
		return nil, &Error{Line: start, Err: fmt.Errorf("front matter: %w", err)}
	}
	w.Body = body
	if errs := refuseOwnerOnly(w, o, &d); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if err := inherit(w, tree.(map[string]any), parent, &d); err != nil {
		return nil, err
	}
	if err := w.Validate(); err != nil {
		return nil, d.locate(err)
	}
	if err := checkOutputs(w); err != nil {
		return nil, d.place(err)
	}
	if _, err := messages.WorkItemPlanHash(w); err != nil {
		return nil, &Error{Line: start, Err: err}
	}
	if w.Type == messages.WorkProject {
		if _, err := Tasks(w); err != nil {
			if pe := (*Error)(nil); errors.As(err, &pe) && pe.Line == 0 {
				pe.Line = d.lines[strings.SplitN(pe.Field, "[", 2)[0]]
			}
			return nil, err
		}
	}
	return w, nil
}

// inherit applies skill inheritance and the parent link.
func inherit(w *messages.WorkItem, keys map[string]any, parent *messages.WorkItem, d *decoder) error {
	if _, explicit := keys["skills"]; !explicit && parent != nil {
		w.Skills = slices.Clone(parent.Skills)
	}
	if w.Skills == nil {
		w.Skills = []string{}
	}
	if parent == nil {
		return nil
	}
	if w.Parent == nil {
		id := parent.ID
		w.Parent = &id
		return nil
	}
	if *w.Parent != parent.ID {
		return &Error{Line: d.lines["parent"], Field: "parent", Err: fmt.Errorf("%q differs from the parent work item %q; remove the key", *w.Parent, parent.ID)}
	}
	return nil
}

// locate turns a validation error into an *Error at the line of its field,
// or of the nearest enclosing field present in the plan.
func (d *decoder) locate(err error) error {
	var fe *messages.FieldError
	if !errors.As(err, &fe) {
		return &Error{Line: d.offset, Err: err}
	}
	for p := fe.Path; p != ""; p = enclosing(p) {
		if line, ok := d.lines[p]; ok {
			return &Error{Line: line, Field: fe.Path, Err: fe.Err}
		}
	}
	return &Error{Line: d.offset, Field: fe.Path, Err: fe.Err}
}

// place puts an *Error without a line at the line of its field, or of
// the nearest enclosing field present in the plan.
func (d *decoder) place(err error) error {
	var pe *Error
	if !errors.As(err, &pe) || pe.Line != 0 {
		return err
	}
	for p := pe.Field; p != ""; p = enclosing(p) {
		if line, ok := d.lines[p]; ok {
			pe.Line = line
			return err
		}
	}
	pe.Line = d.offset
	return err
}

// enclosing drops the last segment of a field path: "a[0].b" -> "a[0]" -> "a".
func enclosing(p string) string {
	i := strings.LastIndexAny(p, ".[")
	if i < 0 {
		return ""
	}
	return p[:i]
}

// split separates the front matter from the body. start is the plan line of
// the opening "---", so YAML line n is plan line start+n.
func split(markdown string) (front, body string, start int, err error) {
	s := strings.TrimPrefix(markdown, "\ufeff")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	lines := strings.Split(s, "\n")
	open := -1
	for i, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if strings.TrimRight(l, " \t") == "---" {
			open = i
		}
		break
	}
	if open < 0 {
		return "", "", 0, &Error{Line: 1, Err: errors.New(`a plan starts with YAML front matter between two "---" lines`)}
	}
	for j := open + 1; j < len(lines); j++ {
		if strings.TrimRight(lines[j], " \t") == "---" {
			front = strings.Join(lines[open+1:j], "\n")
			body = strings.TrimSpace(strings.Join(lines[j+1:], "\n"))
			return front, body, open + 1, nil
		}
	}
	return "", "", 0, &Error{Line: open + 1, Err: errors.New(`the front matter is not closed; end it with a "---" line`)}
}

// yamlError places a YAML syntax error ("yaml: line N: reason") on its plan line.
func yamlError(err error, start int) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		num, reason, found := strings.Cut(rest, ": ")
		if n, convErr := strconv.Atoi(num); found && convErr == nil {
			return &Error{Line: start + n, Err: fmt.Errorf("front matter: %s", reason)}
		}
	}
	return &Error{Line: start, Err: fmt.Errorf("front matter: %s", msg)}
}
