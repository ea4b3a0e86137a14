package skills

import (
	"fmt"
	"net/url"
	"path"
	"regexp"
	"strings"
)

var (
	// mdLinkRE finds inline links and images: [text](target "title").
	mdLinkRE = regexp.MustCompile(`!?\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?(?:\s+["'][^"'\n]*["'])?\s*\)`)
	// mdRefDefRE finds reference definitions: [id]: target.
	mdRefDefRE = regexp.MustCompile(`(?m)^\s{0,3}\[[^\]\n]+\]:\s*<?(\S+?)>?(?:\s|$)`)
	// codeSpanRE finds inline code spans.
	codeSpanRE = regexp.MustCompile("`([^`\n]+)`")
	schemeRE   = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.\-]*:`)
)

// skillDirPrefixes start a token in a code span that names a skill file.
var skillDirPrefixes = []string{DirScripts + "/", DirReferences + "/", DirAssets + "/", "./", "../"}

// checkReferences checks every relative link in SKILL.md and in the
// markdown files under references/, and every code span of SKILL.md naming
// a file under scripts/, references/ or assets/: the target must stay
// inside the skill directory and exist.
func checkReferences(s *Skill, r *ValidationReport) {
	files := entryPaths(s.entries)
	dirs := map[string]bool{}
	for p := range files {
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	for _, e := range s.entries {
		if e.Path != SkillFile && !(strings.HasPrefix(e.Path, DirReferences+"/") && path.Ext(e.Path) == ".md") {
			continue
		}
		if !isText(e.Data) {
			continue
		}
		base := path.Dir(e.Path)
		for i, line := range strings.Split(string(e.Data), "\n") {
			n := i + 1
			var targets []string
			for _, m := range mdLinkRE.FindAllStringSubmatch(line, -1) {
				targets = append(targets, m[1])
			}
			for _, m := range mdRefDefRE.FindAllStringSubmatch(line, -1) {
				targets = append(targets, m[1])
			}
			for _, t := range targets {
				checkTarget(e.Path, n, base, t, files, dirs, r)
			}
			if e.Path != SkillFile {
				continue
			}
			for _, m := range codeSpanRE.FindAllStringSubmatch(line, -1) {
				for _, tok := range strings.Fields(m[1]) {
					tok = strings.Trim(tok, `"'(),;`)
					if hasAnyPrefix(tok, skillDirPrefixes) && !strings.ContainsAny(tok, "*?[{$<") {
						// Code spans in SKILL.md name paths from the skill root.
						checkTarget(e.Path, n, ".", tok, files, dirs, r)
					}
				}
			}
		}
	}
}

// checkTarget checks one reference found in file at line.
func checkTarget(file string, line int, base, target string, files, dirs map[string]bool, r *ValidationReport) {
	if target == "" || strings.HasPrefix(target, "#") || schemeRE.MatchString(target) || strings.HasPrefix(target, "//") {
		return // an anchor or a URL
	}
	t := target
	if i := strings.IndexAny(t, "#?"); i >= 0 {
		t = t[:i]
	}
	if u, err := url.PathUnescape(t); err == nil {
		t = u
	}
	if strings.HasPrefix(t, "/") || strings.HasPrefix(t, "~") {
		r.add(SeverityError, RulePath, file, line, "", fmt.Sprintf("reference %s is an absolute path; skills may only reference their own files, by relative path", target))
		return
	}
	joined := path.Join(base, t)
	if joined == ".." || strings.HasPrefix(joined, "../") {
		r.add(SeverityError, RulePath, file, line, "", fmt.Sprintf("reference %s escapes the skill directory; keep every referenced file inside the skill", target))
		return
	}
	if joined == "." || files[joined] || dirs[strings.TrimSuffix(joined, "/")] {
		return
	}
	r.add(SeverityError, RulePath, file, line, "", fmt.Sprintf("reference %s points to %s, which does not exist in the skill; add the file or fix the reference", target, joined))
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
