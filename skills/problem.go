package skills

import (
	"errors"
	"fmt"
	"strings"
)

// Problem is one violation of the skill format, located by file, line and
// field so the author can fix it without guessing.
type Problem struct {
	// File is the path relative to the skill directory ("SKILL.md").
	File string `json:"file"`
	// Line is 1-based in File; 0 when the problem has no line.
	Line int `json:"line,omitempty"`
	// Field is the front matter field ("script_args.scripts/run.py.path"),
	// empty for problems outside the front matter.
	Field string `json:"field,omitempty"`
	// Message says what is wrong and what to do.
	Message string `json:"message"`
}

func (p Problem) String() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Line > 0 {
		fmt.Fprintf(&b, ":%d", p.Line)
	}
	if p.Field != "" {
		b.WriteString(": ")
		b.WriteString(p.Field)
	}
	b.WriteString(": ")
	b.WriteString(p.Message)
	return b.String()
}

// ParseError is every problem Parse found in one skill directory.
// errors.Is(err, ErrInvalidSkill) holds.
type ParseError struct {
	// Dir is the skill directory's name.
	Dir      string
	Problems []Problem
}

func (e *ParseError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "skill %s is invalid:", e.Dir)
	for _, p := range e.Problems {
		b.WriteString("\n  ")
		b.WriteString(p.String())
	}
	return b.String()
}

// Is makes errors.Is(err, ErrInvalidSkill) true.
func (e *ParseError) Is(target error) bool { return target == ErrInvalidSkill }

// problems collects Problems of one file.
type problems struct {
	list []Problem
}

func (ps *problems) add(file string, line int, field, format string, args ...any) {
	ps.list = append(ps.list, Problem{File: file, Line: line, Field: field, Message: fmt.Sprintf(format, args...)})
}

// asParseError is errors.As for *ParseError.
func asParseError(err error, target **ParseError) bool { return errors.As(err, target) }
