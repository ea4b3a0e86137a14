package skills

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Size limits of SKILL.md.
const (
	MaxSkillFileBytes  = 256 << 10
	MaxFrontMatterSize = 64 << 10
)

// frontMatter is SKILL.md split into its YAML front matter and body.
type frontMatter struct {
	yaml     string
	body     string
	offset   int // SKILL.md line of the YAML text's line 0 (the opening "---")
	bodyLine int
}

// splitFrontMatter splits SKILL.md text. The first line must be "---"; the
// front matter ends at the next "---" line.
func splitFrontMatter(text string) (frontMatter, error) {
	s := strings.TrimPrefix(text, "\ufeff")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	lines := strings.Split(s, "\n")
	if len(lines) == 0 || strings.TrimRight(lines[0], " \t") != "---" {
		return frontMatter{}, errors.New(`SKILL.md must start with YAML front matter: a "---" line, the fields, and a closing "---" line`)
	}
	for j := 1; j < len(lines); j++ {
		if strings.TrimRight(lines[j], " \t") == "---" {
			fm := frontMatter{
				yaml:     strings.Join(lines[1:j], "\n"),
				body:     strings.Join(lines[j+1:], "\n"),
				offset:   1,
				bodyLine: j + 2,
			}
			if len(fm.yaml) > MaxFrontMatterSize {
				return frontMatter{}, fmt.Errorf("the front matter is %d bytes, at most %d are allowed", len(fm.yaml), MaxFrontMatterSize)
			}
			return fm, nil
		}
	}
	return frontMatter{}, errors.New(`the front matter is not closed; end it with a "---" line`)
}

// yamlErrorLine extracts the line of a YAML syntax error ("yaml: line N:
// reason") and returns the SKILL.md line and the reason.
func yamlErrorLine(err error, offset int) (int, string) {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		num, reason, found := strings.Cut(rest, ": ")
		if n, convErr := strconv.Atoi(num); found && convErr == nil {
			return offset + n, reason
		}
	}
	return offset, msg
}

// checkNoAliases reports the first anchor or alias in the tree: they let a
// small document expand into a huge one and hide what a value really is.
func checkNoAliases(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.AliasNode || n.Anchor != "" {
		return n
	}
	for _, c := range n.Content {
		if bad := checkNoAliases(c); bad != nil {
			return bad
		}
	}
	return nil
}

// Bounds of the front matter's YAML tree. Decoding a mapping costs time
// quadratic in its size (duplicate key checks), so a wide mapping in a
// small file could stall the loader; no real skill comes near these.
const (
	maxYAMLNodes   = 10_000
	maxYAMLPairs   = 512
	maxYAMLItems   = 1024
	maxYAMLNesting = 32
)

// checkTreeLimits returns the first node past the bounds and why.
func checkTreeLimits(root *yaml.Node) (*yaml.Node, string) {
	count := 0
	var walk func(n *yaml.Node, depth int) (*yaml.Node, string)
	walk = func(n *yaml.Node, depth int) (*yaml.Node, string) {
		count++
		switch {
		case count > maxYAMLNodes:
			return n, fmt.Sprintf("the front matter has more than %d values", maxYAMLNodes)
		case depth > maxYAMLNesting:
			return n, fmt.Sprintf("the front matter nests deeper than %d levels", maxYAMLNesting)
		case n.Kind == yaml.MappingNode && len(n.Content)/2 > maxYAMLPairs:
			return n, fmt.Sprintf("a mapping has more than %d keys", maxYAMLPairs)
		case n.Kind == yaml.SequenceNode && len(n.Content) > maxYAMLItems:
			return n, fmt.Sprintf("a list has more than %d items", maxYAMLItems)
		}
		for _, c := range n.Content {
			if bad, why := walk(c, depth+1); bad != nil {
				return bad, why
			}
		}
		return nil, ""
	}
	return walk(root, 0)
}

// describeNode names a node's kind for error messages.
func describeNode(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return "nothing (null)"
		case "!!bool":
			return "a boolean"
		case "!!int", "!!float":
			return "a number"
		}
		return fmt.Sprintf("the text %q", truncate(n.Value, 40))
	}
	return "an unsupported value"
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "..."
}

// pairs iterates over the key/value nodes of a mapping node.
func pairs(n *yaml.Node) [][2]*yaml.Node {
	out := make([][2]*yaml.Node, 0, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		out = append(out, [2]*yaml.Node{n.Content[i], n.Content[i+1]})
	}
	return out
}

func validUTF8(s string) bool { return utf8.ValidString(s) }
