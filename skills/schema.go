package skills

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// ArgType is the type of a script argument.
type ArgType string

// Argument types of script_args.
const (
	ArgString  ArgType = "string"
	ArgInteger ArgType = "integer"
	ArgNumber  ArgType = "number"
	ArgBoolean ArgType = "boolean"
	ArgArray   ArgType = "array"
)

// Bounds of script_args schemas.
const (
	// DefaultMaxLength bounds a string argument whose schema sets no
	// max_length.
	DefaultMaxLength = 4096
	// MaxMaxLength is the largest max_length a schema may declare.
	MaxMaxLength = 100_000
	// DefaultMaxItems bounds an array argument whose schema sets no
	// max_items; MaxMaxItems is the largest it may declare.
	DefaultMaxItems = 32
	MaxMaxItems     = 256
	// MaxArgsPerScript bounds the arguments one script may declare.
	MaxArgsPerScript = 32
	// maxArgBytes is Linux's MAX_ARG_STRLEN less the terminating NUL: one
	// argv element longer than this cannot be passed to execve.
	maxArgBytes = 131072 - 1
	// maxArgvBytes bounds a whole argument list.
	maxArgvBytes = 1 << 20
	// maxSafeInt is the largest integer every JSON reader holds exactly.
	maxSafeInt = 1 << 53
)

// FormatPath marks a string argument as a path relative to the work dir:
// not absolute, no ".." element, no "~".
const FormatPath = "path"

var argNameRE = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

// ArgSpec is the schema of one script argument (script_args in SKILL.md).
// An argument is passed to the script as one argv element "--name=value"
// (an array as one element per item), so a value can never become an
// option of its own or be read by a shell.
type ArgSpec struct {
	Name        string  `json:"name"`
	Type        ArgType `json:"type"`
	Description string  `json:"description,omitempty"`
	// Required is true when the argument has no default, unless the
	// schema says required: false.
	Required bool `json:"required"`
	// Default is used when the argument is absent (nil: none).
	Default any `json:"default,omitempty"`
	// Example is a value for dry runs (nil: none).
	Example any   `json:"example,omitempty"`
	Enum    []any `json:"enum,omitempty"`
	// Pattern is an RE2 expression the whole string must match.
	Pattern   string   `json:"pattern,omitempty"`
	MinLength int      `json:"min_length,omitempty"`
	MaxLength int      `json:"max_length,omitempty"`
	Minimum   *float64 `json:"minimum,omitempty"`
	Maximum   *float64 `json:"maximum,omitempty"`
	MaxItems  int      `json:"max_items,omitempty"`
	Items     *ArgSpec `json:"items,omitempty"`
	// Format is "" or FormatPath.
	Format string `json:"format,omitempty"`
	// AllowLeadingDash lets a string start with '-'. Off by default, so a
	// value cannot pose as an option of a program the script calls.
	AllowLeadingDash bool `json:"allow_leading_dash,omitempty"`

	re *regexp.Regexp
}

// specKeys are the keys an argument schema may hold.
var specKeys = []string{"type", "description", "required", "default", "example", "enum", "pattern",
	"min_length", "max_length", "minimum", "maximum", "max_items", "items", "format", "allow_leading_dash"}

// parseArgSpec reads one argument schema from n; field is its path for
// problems (script_args.scripts/x.py.name).
func parseArgSpec(name string, n *yaml.Node, field string, at func(*yaml.Node) int, ps *problems, nested bool) *ArgSpec {
	a := &ArgSpec{Name: name}
	if n.Kind != yaml.MappingNode {
		ps.add(SkillFile, at(n), field, "expected a mapping such as {type: string, max_length: 300}, got %s", describeNode(n))
		return nil
	}
	seen := map[string]*yaml.Node{}
	for _, kv := range pairs(n) {
		k, v := kv[0], kv[1]
		if !slices.Contains(specKeys, k.Value) {
			ps.add(SkillFile, at(k), field+"."+k.Value, "unknown schema key; allowed: %s", strings.Join(specKeys, ", "))
			continue
		}
		if seen[k.Value] != nil {
			ps.add(SkillFile, at(k), field+"."+k.Value, "appears twice")
			continue
		}
		seen[k.Value] = v
	}
	bad := len(ps.list)
	str := func(key string) string {
		v := seen[key]
		if v == nil {
			return ""
		}
		if v.Kind != yaml.ScalarNode || v.Tag != "!!str" {
			ps.add(SkillFile, at(v), field+"."+key, "expected text, got %s", describeNode(v))
			return ""
		}
		return v.Value
	}
	integer := func(key string) int {
		v := seen[key]
		if v == nil {
			return 0
		}
		i, err := strconv.Atoi(v.Value)
		if v.Kind != yaml.ScalarNode || v.Tag != "!!int" || err != nil || i < 0 {
			ps.add(SkillFile, at(v), field+"."+key, "expected a whole number >= 0, got %s", describeNode(v))
			return 0
		}
		return i
	}
	boolean := func(key string) (bool, bool) {
		v := seen[key]
		if v == nil {
			return false, false
		}
		if v.Kind != yaml.ScalarNode || v.Tag != "!!bool" {
			ps.add(SkillFile, at(v), field+"."+key, "expected true or false, got %s", describeNode(v))
			return false, false
		}
		return v.Value == "true", true
	}
	number := func(key string) *float64 {
		v := seen[key]
		if v == nil {
			return nil
		}
		f, err := strconv.ParseFloat(v.Value, 64)
		if v.Kind != yaml.ScalarNode || (v.Tag != "!!int" && v.Tag != "!!float") || err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			ps.add(SkillFile, at(v), field+"."+key, "expected a finite number, got %s", describeNode(v))
			return nil
		}
		return &f
	}
	value := func(key string) any {
		v := seen[key]
		if v == nil {
			return nil
		}
		var out any
		if err := v.Decode(&out); err != nil {
			ps.add(SkillFile, at(v), field+"."+key, "cannot be read: %v", err)
			return nil
		}
		return out
	}

	a.Type = ArgType(str("type"))
	switch a.Type {
	case ArgString, ArgInteger, ArgNumber, ArgBoolean:
	case ArgArray:
		if nested {
			ps.add(SkillFile, at(seen["type"]), field+".type", "arrays of arrays are not supported")
		}
	case "":
		if seen["type"] == nil {
			ps.add(SkillFile, at(n), field+".type", "is missing; set one of string, integer, number, boolean, array")
		}
	default:
		ps.add(SkillFile, at(seen["type"]), field+".type", "%q is not a type; use string, integer, number, boolean or array", a.Type)
	}
	a.Description = str("description")
	a.Pattern = str("pattern")
	a.Format = str("format")
	a.MinLength = integer("min_length")
	a.MaxLength = integer("max_length")
	a.MaxItems = integer("max_items")
	a.Minimum = number("minimum")
	a.Maximum = number("maximum")
	a.AllowLeadingDash, _ = boolean("allow_leading_dash")
	req, reqSet := boolean("required")

	only := func(key string, types ...ArgType) {
		if seen[key] != nil && !slices.Contains(types, a.Type) {
			ps.add(SkillFile, at(seen[key]), field+"."+key, "does not apply to type %s", a.Type)
		}
	}
	only("pattern", ArgString)
	only("format", ArgString)
	only("min_length", ArgString)
	only("max_length", ArgString)
	only("allow_leading_dash", ArgString)
	only("minimum", ArgInteger, ArgNumber)
	only("maximum", ArgInteger, ArgNumber)
	only("max_items", ArgArray)
	only("items", ArgArray)
	only("enum", ArgString, ArgInteger, ArgNumber)

	if a.Type == ArgString && a.MaxLength == 0 {
		a.MaxLength = DefaultMaxLength
	}
	if a.MaxLength > MaxMaxLength {
		ps.add(SkillFile, at(seen["max_length"]), field+".max_length", "%d is more than the limit %d; pass large inputs as a file in the work dir", a.MaxLength, MaxMaxLength)
	}
	if a.MinLength > a.MaxLength && a.Type == ArgString {
		ps.add(SkillFile, at(seen["min_length"]), field+".min_length", "%d exceeds max_length %d", a.MinLength, a.MaxLength)
	}
	if a.Type == ArgArray && a.MaxItems == 0 {
		a.MaxItems = DefaultMaxItems
	}
	if a.MaxItems > MaxMaxItems {
		ps.add(SkillFile, at(seen["max_items"]), field+".max_items", "%d is more than the limit %d", a.MaxItems, MaxMaxItems)
	}
	if a.Minimum != nil && a.Maximum != nil && *a.Minimum > *a.Maximum {
		ps.add(SkillFile, at(seen["minimum"]), field+".minimum", "exceeds maximum")
	}
	if a.Format != "" && a.Format != FormatPath {
		ps.add(SkillFile, at(seen["format"]), field+".format", "%q is not a format; the only format is %q", a.Format, FormatPath)
	}
	if a.Pattern != "" {
		re, err := regexp.Compile(`^(?:` + a.Pattern + `)$`)
		if err != nil {
			ps.add(SkillFile, at(seen["pattern"]), field+".pattern", "is not a valid RE2 expression: %v", err)
		}
		a.re = re
	}
	if a.Type == ArgArray {
		if it := seen["items"]; it != nil {
			a.Items = parseArgSpec(name, it, field+".items", at, ps, true)
		} else if !nested {
			ps.add(SkillFile, at(n), field+".items", "is missing; an array declares the schema of its items")
		}
	}
	if ev := seen["enum"]; ev != nil {
		if ev.Kind != yaml.SequenceNode || len(ev.Content) == 0 {
			ps.add(SkillFile, at(ev), field+".enum", "expected a non-empty list, got %s", describeNode(ev))
		} else if list, ok := value("enum").([]any); ok {
			a.Enum = list
		}
	}
	a.Default = value("default")
	a.Example = value("example")
	a.Required = a.Default == nil
	if reqSet {
		if req && a.Default != nil {
			ps.add(SkillFile, at(seen["required"]), field+".required", "an argument with a default is not required; drop one of them")
		}
		a.Required = req
	}
	if len(ps.list) > bad {
		return a
	}
	// The schema itself is sound: its enum, default and example must obey it.
	for i, e := range a.Enum {
		probe := *a
		probe.Enum = nil
		if _, err := probe.render(e); err != nil {
			ps.add(SkillFile, at(seen["enum"].Content[i]), field+".enum", "entry %d: %v", i, err)
		}
	}
	for _, key := range []string{"default", "example"} {
		v := a.Default
		if key == "example" {
			v = a.Example
		}
		if v == nil {
			continue
		}
		if _, err := a.render(v); err != nil {
			ps.add(SkillFile, at(seen[key]), field+"."+key, "%v", err)
		}
	}
	return a
}

// render checks v against the schema and returns the values to pass (one
// per array item, else one).
func (a *ArgSpec) render(v any) ([]string, error) {
	switch a.Type {
	case ArgArray:
		list, ok := v.([]any)
		if !ok {
			if ss, isStrings := v.([]string); isStrings {
				for _, s := range ss {
					list = append(list, s)
				}
				ok = true
			}
		}
		if !ok {
			return nil, fmt.Errorf("expected a list, got %s", kindOf(v))
		}
		if len(list) > a.MaxItems {
			return nil, fmt.Errorf("has %d items, at most %d are allowed", len(list), a.MaxItems)
		}
		if a.Items == nil {
			return nil, fmt.Errorf("declares no item schema")
		}
		out := make([]string, 0, len(list))
		for i, it := range list {
			s, err := a.Items.render(it)
			if err != nil {
				return nil, fmt.Errorf("item %d: %w", i, err)
			}
			out = append(out, s...)
		}
		return out, nil
	case ArgString:
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("expected text, got %s", kindOf(v))
		}
		if err := a.checkString(s); err != nil {
			return nil, err
		}
		return []string{s}, nil
	case ArgBoolean:
		b, ok := v.(bool)
		if !ok {
			return nil, fmt.Errorf("expected true or false, got %s", kindOf(v))
		}
		return []string{strconv.FormatBool(b)}, nil
	case ArgInteger, ArgNumber:
		f, s, err := a.number(v)
		if err != nil {
			return nil, err
		}
		if a.Minimum != nil && f < *a.Minimum {
			return nil, fmt.Errorf("%s is below the minimum %g", s, *a.Minimum)
		}
		if a.Maximum != nil && f > *a.Maximum {
			return nil, fmt.Errorf("%s is above the maximum %g", s, *a.Maximum)
		}
		if len(a.Enum) > 0 && !slices.ContainsFunc(a.Enum, func(e any) bool { ef, _, err := a.number(e); return err == nil && ef == f }) {
			return nil, fmt.Errorf("%s is not one of %s", s, enumList(a.Enum))
		}
		return []string{s}, nil
	}
	return nil, fmt.Errorf("has no valid type")
}

// number converts v for an integer or number argument and renders it.
func (a *ArgSpec) number(v any) (float64, string, error) {
	var f float64
	switch n := v.(type) {
	case float64:
		f = n
	case float32:
		f = float64(n)
	case int:
		f = float64(n)
	case int64:
		f = float64(n)
	case uint64:
		f = float64(n)
	case json.Number:
		g, err := n.Float64()
		if err != nil {
			return 0, "", fmt.Errorf("%q is not a number", n.String())
		}
		f = g
	default:
		return 0, "", fmt.Errorf("expected a number, got %s", kindOf(v))
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, "", fmt.Errorf("expected a finite number")
	}
	if a.Type == ArgInteger {
		if f != math.Trunc(f) || math.Abs(f) > maxSafeInt {
			return 0, "", fmt.Errorf("expected a whole number within ±2^53, got %g", f)
		}
		return f, strconv.FormatInt(int64(f), 10), nil
	}
	return f, strconv.FormatFloat(f, 'g', -1, 64), nil
}

// checkString applies the string rules.
func (a *ArgSpec) checkString(s string) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("is not valid UTF-8")
	}
	if strings.IndexByte(s, 0) >= 0 {
		return fmt.Errorf("holds a NUL byte")
	}
	n := utf8.RuneCountInString(s)
	if n > a.MaxLength {
		return fmt.Errorf("is %d characters long, at most %d are allowed", n, a.MaxLength)
	}
	if n < a.MinLength {
		return fmt.Errorf("is %d characters long, at least %d are required", n, a.MinLength)
	}
	if strings.HasPrefix(s, "-") && !a.AllowLeadingDash {
		return fmt.Errorf("starts with '-', which a program could read as an option; the schema does not allow it")
	}
	if a.Format == FormatPath {
		if err := checkRelPath(s); err != nil {
			return err
		}
	}
	if a.re != nil && !a.re.MatchString(s) {
		return fmt.Errorf("does not match the pattern %s", a.Pattern)
	}
	if len(a.Enum) > 0 && !slices.Contains(a.Enum, any(s)) {
		return fmt.Errorf("%q is not one of %s", truncate(s, 40), enumList(a.Enum))
	}
	return nil
}

// checkRelPath accepts a path relative to the work dir that cannot leave it
// by its spelling.
func checkRelPath(s string) error {
	switch {
	case s == "":
		return fmt.Errorf("is an empty path")
	case strings.HasPrefix(s, "/"):
		return fmt.Errorf("is an absolute path; give a path relative to the work dir")
	case strings.HasPrefix(s, "~"):
		return fmt.Errorf("starts with '~'; give a path relative to the work dir")
	case strings.ContainsRune(s, '\\'):
		return fmt.Errorf("holds a backslash; use '/' between path elements")
	}
	for _, el := range strings.Split(s, "/") {
		if el == ".." {
			return fmt.Errorf("holds a '..' element; a path must stay inside the work dir")
		}
	}
	return nil
}

func enumList(enum []any) string {
	parts := make([]string, len(enum))
	for i, e := range enum {
		parts[i] = fmt.Sprintf("%v", e)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "text"
	case bool:
		return "a boolean"
	case float64, float32, int, int64, uint64, json.Number:
		return "a number"
	case []any, []string:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// JSONSchema returns the argument's schema as JSON Schema, for tool
// definitions shown to the executor.
func (a *ArgSpec) JSONSchema() map[string]any {
	s := map[string]any{"type": string(a.Type)}
	if a.Description != "" {
		s["description"] = a.Description
	}
	if a.Default != nil {
		s["default"] = a.Default
	}
	if len(a.Enum) > 0 {
		s["enum"] = a.Enum
	}
	if a.Pattern != "" {
		s["pattern"] = "^(?:" + a.Pattern + ")$"
	}
	if a.Type == ArgString {
		s["maxLength"] = a.MaxLength
		if a.MinLength > 0 {
			s["minLength"] = a.MinLength
		}
	}
	if a.Minimum != nil {
		s["minimum"] = *a.Minimum
	}
	if a.Maximum != nil {
		s["maximum"] = *a.Maximum
	}
	if a.Type == ArgArray {
		s["maxItems"] = a.MaxItems
		if a.Items != nil {
			s["items"] = a.Items.JSONSchema()
		}
	}
	return s
}
