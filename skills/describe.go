package skills

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// The description lint (spec 10.1 "description quality rule", spec 11
// fail_on_process_heavy_description) is deterministic: fixed expressions,
// fixed thresholds, no model.
var (
	// stepsRE finds enumerated steps: "1." "2)" "step 3".
	stepsRE = regexp.MustCompile(`(?i)(?:^|\s)(?:\d{1,2}[.)]\s|step\s+\d+\b)`)
	// sequenceRE finds words that order a procedure.
	sequenceRE = regexp.MustCompile(`(?i)\b(?:first(?:ly)?|then|next|after\s+that|afterwards|finally|lastly|subsequently|second(?:ly)?|third(?:ly)?)\b`)
	// commandRE finds command lines and flags, which belong in the body.
	commandRE = regexp.MustCompile("`|--[a-z]|&&|\\|\\s*\\w|\\$\\s|\\bsudo\\b|\\bpip3?\\s+install\\b|\\bnpm\\s+(?:install|run)\\b|\\bcd\\s+\\S")
	// imperativeRE finds sentences that start with an instruction verb.
	imperativeRE = regexp.MustCompile(`(?i)(?:^|[.;:!?]\s+)(?:run|execute|call|invoke|open|click|create|write|read|install|set|copy|move|delete|remove|parse|build|compile|start|stop|navigate|type|enter|download|upload|save|load|check|verify|update|edit|apply|submit|send|fetch|go)\s`)
	// whenRE finds a routing cue: when the skill applies.
	whenRE = regexp.MustCompile(`(?i)\b(?:use\s+(?:this|it|when|for|to|if|whenever)|when(?:ever)?\b|if\s+the\s+(?:user|owner|task)|for\s+(?:tasks?|requests?|questions?|work)\b|asks?\s+(?:to|for|about)|helps?\s+(?:with|to))`)
)

// Thresholds of the process lint.
const (
	maxSteps      = 1 // more enumerated steps than this is a procedure
	maxSequence   = 2 // more ordering words than this is a procedure
	maxImperative = 2 // more instruction sentences than this is a procedure
)

// processSignals returns why a description reads as a procedure (how to
// do) rather than as routing intent (when to use), or nil.
func processSignals(desc string) []string {
	var out []string
	if n := len(stepsRE.FindAllString(desc, -1)); n > maxSteps {
		out = append(out, fmt.Sprintf("%d numbered steps", n))
	}
	if m := sequenceRE.FindAllString(desc, -1); len(m) > maxSequence {
		out = append(out, fmt.Sprintf("sequencing words (%s)", strings.ToLower(strings.Join(m, ", "))))
	}
	if m := commandRE.FindString(desc); m != "" {
		out = append(out, fmt.Sprintf("command syntax (%q)", strings.TrimSpace(m)))
	}
	if n := len(imperativeRE.FindAllString(desc, -1)); n > maxImperative {
		out = append(out, fmt.Sprintf("%d instruction sentences", n))
	}
	return out
}

// checkDescription applies the configured bounds and the quality lint.
func checkDescription(s *Skill, o Options, r *ValidationReport) {
	line := s.Line("description")
	n := utf8.RuneCountInString(s.Description)
	minC, maxC := o.minChars(), o.maxChars()
	if n < minC {
		r.add(SeverityError, RuleDescriptionLength, SkillFile, line, "description",
			fmt.Sprintf("description is too short (%d characters, at least %d): say what the skill does and when to use it", n, minC))
	}
	if n > maxC {
		r.add(SeverityError, RuleDescriptionLength, SkillFile, line, "description",
			fmt.Sprintf("description is too long (%d characters, at most %d): keep it to when to use the skill and move detail into the body", n, maxC))
	}
	if sig := processSignals(s.Description); len(sig) > 0 {
		sev := SeverityError
		if o.AllowProcessHeavyDescription {
			sev = SeverityWarning
		}
		r.add(sev, RuleDescriptionQuality, SkillFile, line, "description",
			fmt.Sprintf("description is process-heavy (%s): describe when to use the skill, not how; move the steps into the SKILL.md body", strings.Join(sig, "; ")))
	}
	if !whenRE.MatchString(s.Description) {
		r.add(SeverityWarning, RuleDescriptionQuality, SkillFile, line, "description",
			`description does not say when to use the skill; add a routing cue such as "Use when the user asks to ..."`)
	}
}
