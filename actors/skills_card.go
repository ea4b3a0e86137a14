package actors

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/skills"
)

// Size limits of a skill_install card. Every script and SKILL.md are
// always shown in full: a skill whose scripts do not fit is refused rather
// than approved unseen. Other text files are shown while they fit.
const (
	maxCardScriptBytes = 1 << 20
	maxCardOtherBytes  = 256 << 10
	maxCardFileBytes   = 64 << 10
)

// skillCard builds what the owner sees before approving: SKILL.md and
// every script in full, every file with its hash, the dry runs and the
// reports. replaces is the installed hash this version would replace.
func skillCard(sk *skills.Skill, report skills.ValidationReport, trans *skills.TransformationReport, origin, dir, replaces string) (messages.SkillCard, error) {
	md, _ := sk.ReadFile(skills.SkillFile)
	card := messages.SkillCard{
		Name: sk.Name, Version: sk.Version, Description: sk.Description, Activation: string(sk.Activation),
		Origin: origin, Dir: dir, Hash: sk.Hash(), Replaces: replaces, SkillMD: string(md),
		Scripts: []messages.SkillCardFile{}, Files: []messages.SkillCardFile{}, DryRuns: []string{},
	}
	scriptBytes, otherBytes := 0, 0
	for _, f := range sk.Files() {
		data, _ := sk.ReadFile(f.Path)
		cf := messages.SkillCardFile{Path: f.Path, SHA256: f.SHA256, Size: f.Size}
		text := utf8.Valid(data) && !strings.ContainsRune(string(data), 0)
		isScript := strings.HasPrefix(f.Path, skills.DirScripts+"/")
		switch {
		case !text:
			cf.Binary = true
			if isScript {
				return card, fmt.Errorf("skill %s: %w: %s is not text, so it cannot be reviewed on the install card; skills ship Python sources only", sk.Name, ErrSkillInvalid, f.Path)
			}
		case isScript:
			scriptBytes += len(data)
			if scriptBytes > maxCardScriptBytes {
				return card, fmt.Errorf("skill %s: %w: its scripts total more than %d bytes, too much to review on one card; split the skill", sk.Name, ErrSkillInvalid, maxCardScriptBytes)
			}
			cf.Content = string(data)
			card.Scripts = append(card.Scripts, cf)
		case f.Path == skills.SkillFile:
		case len(data) <= maxCardFileBytes && otherBytes+len(data) <= maxCardOtherBytes:
			otherBytes += len(data)
			cf.Content = string(data)
		default:
			cf.Omitted = true
		}
		card.Files = append(card.Files, messages.SkillCardFile{Path: cf.Path, SHA256: cf.SHA256, Size: cf.Size, Content: contentOf(cf, isScript), Binary: cf.Binary, Omitted: cf.Omitted})
	}
	for _, in := range sk.DryRuns() {
		card.DryRuns = append(card.DryRuns, strings.TrimSpace(in.Script+" "+strings.Join(in.Args, " ")))
	}
	var err error
	if card.ValidationReport, err = json.Marshal(report); err != nil {
		return card, fmt.Errorf("encode the validation report: %w", err)
	}
	if trans != nil {
		if card.TransformationReport, err = json.Marshal(trans); err != nil {
			return card, fmt.Errorf("encode the transformation report: %w", err)
		}
	}
	return card, nil
}

// contentOf keeps a file's content in the Files list only for files shown
// nowhere else (scripts are under Scripts, SKILL.md under SkillMD).
func contentOf(f messages.SkillCardFile, isScript bool) string {
	if isScript {
		return ""
	}
	return f.Content
}

// cardBody is the card's plain-text summary (spec 8.1 body).
func cardBody(c messages.SkillCard, r skills.ValidationReport) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\n", c.Description)
	warnings := len(r.Findings) - len(r.Errors())
	fmt.Fprintf(&b, "%d files, %d scripts, hash %s. Validation passed with %d warning(s).", len(c.Files), len(c.Scripts), c.Hash, warnings)
	if len(c.DryRuns) > 0 {
		fmt.Fprintf(&b, " After approval %d dry run(s) run in the sandbox before anything is installed.", len(c.DryRuns))
	}
	if c.Replaces != "" {
		fmt.Fprintf(&b, " It replaces the installed version %s.", c.Replaces)
	}
	fmt.Fprintf(&b, "\nFrom: %s", c.Dir)
	return b.String()
}

// firstErrors lists the first validation errors of a report for a one-line
// message; the report itself has them all.
func firstErrors(r skills.ValidationReport) string {
	errs := r.Errors()
	var parts []string
	for i, f := range errs {
		if i == 3 {
			parts = append(parts, fmt.Sprintf("and %d more", len(errs)-3))
			break
		}
		loc := f.File
		if f.Line > 0 {
			loc = fmt.Sprintf("%s:%d", f.File, f.Line)
		}
		if f.Field != "" {
			loc += " " + f.Field
		}
		parts = append(parts, strings.TrimSpace(fmt.Sprintf("%s: %s (%s)", loc, f.Message, f.Rule)))
	}
	return strings.Join(parts, "; ")
}
