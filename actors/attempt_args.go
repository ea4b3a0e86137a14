package actors

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/silas-ai/silas/runtime/llm"
)

// toolArgsSchema is the part of JSON Schema the executor's tools declare
// their parameters with: an object of typed properties, some required, and
// possibly no others.
type toolArgsSchema struct {
	Type       string `json:"type"`
	Properties map[string]struct {
		Type string `json:"type"`
	} `json:"properties"`
	Required             []string `json:"required"`
	AdditionalProperties *bool    `json:"additionalProperties"`
}

// checkToolArgs validates a tool call against the declared tools before it
// runs (spec 5.2.1 c2): the tool must be one of tools, and args (nil when
// the arguments were not a JSON object) must match its parameter schema.
// The error names every problem, in a fixed order, so that the executor
// can correct the call; it never quotes the argument values.
func checkToolArgs(tools []llm.Tool, name string, args map[string]any) error {
	i := slices.IndexFunc(tools, func(t llm.Tool) bool { return t.Name == name })
	if i < 0 {
		names := make([]string, len(tools))
		for j, t := range tools {
			names[j] = t.Name
		}
		return fmt.Errorf("unknown tool %q; the tools are %s", name, strings.Join(names, ", "))
	}
	if args == nil {
		return fmt.Errorf("invalid arguments for %s: they are not a JSON object", name)
	}
	var s toolArgsSchema
	if err := json.Unmarshal(tools[i].Parameters, &s); err != nil || s.Type != "object" {
		return fmt.Errorf("the parameters of %s cannot be checked: their schema is not an object schema", name)
	}
	var problems []string
	for _, k := range sortedKeys(args) {
		p, ok := s.Properties[k]
		switch {
		case !ok && s.AdditionalProperties != nil && !*s.AdditionalProperties:
			problems = append(problems, fmt.Sprintf("unknown argument %q", k))
		case ok && p.Type != "" && !jsonTypeIs(args[k], p.Type):
			problems = append(problems, fmt.Sprintf("argument %q must be %s, not %s", k, withArticle(p.Type), jsonTypeOf(args[k])))
		}
	}
	for _, k := range s.Required {
		if _, ok := args[k]; !ok {
			problems = append(problems, fmt.Sprintf("missing required argument %q (%s)", k, s.Properties[k].Type))
		}
	}
	if len(problems) == 0 {
		return nil
	}
	allowed := sortedKeys(s.Properties)
	return fmt.Errorf("invalid arguments for %s: %s; its arguments are %s", name, strings.Join(problems, "; "), strings.Join(allowed, ", "))
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// jsonTypeIs reports whether v, decoded by encoding/json, is of the JSON
// Schema type typ.
func jsonTypeIs(v any, typ string) bool {
	switch typ {
	case "integer":
		f, ok := v.(float64)
		return ok && f == math.Trunc(f) && !math.IsInf(f, 0)
	case "number":
		_, ok := v.(float64)
		return ok
	}
	return jsonTypeOf(v) == typ
}

// jsonTypeOf names the JSON type of a value decoded by encoding/json.
func jsonTypeOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "boolean"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func withArticle(typ string) string {
	switch typ {
	case "integer", "array", "object":
		return "an " + typ
	}
	return "a " + typ
}
