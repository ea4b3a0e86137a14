package skills

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/silas-ai/silas/runtime/gates/guardrails"
	"github.com/silas-ai/silas/skills/manifest"
)

// adapter turns the files of an import source into a Silas skill.
type adapter struct {
	rep     *TransformationReport
	files   []srcFile
	dirName string
	opts    ImportOptions

	// fields are the source's front matter fields, in order.
	fields map[string]*yaml.Node
	keys   []*yaml.Node
	body   string
	// openaiYAML is agents/openai.yaml, when present.
	openaiYAML []byte
	hasClawHub bool

	name string
	// out maps Silas paths to bytes; SKILL.md is added last.
	out   map[string][]byte
	moves map[string]string
	// wrapped are the generated Python entry points of shell scripts.
	wrapped []ScriptRewrite
	// wrappedArgs holds each entry point's script_args schema.
	wrappedArgs map[string]*yaml.Node
	// bodyStart is the SKILL.md line the body starts on.
	bodyStart int
}

// run adapts a.files into a.out.
func (a *adapter) run() error {
	skillMD, err := a.findSkillFile()
	if err != nil {
		return err
	}
	if err := a.readFrontMatter(skillMD); err != nil {
		return err
	}
	a.rep.Source.Format, a.rep.Source.DetectedBy = a.detect()
	if a.opts.FormatHint != "" {
		a.rep.Source.Format = a.opts.FormatHint
		a.rep.Source.DetectedBy = append(a.rep.Source.DetectedBy, "format_hint")
	}
	if err := a.relocate(skillMD); err != nil {
		return err
	}
	if err := a.chooseName(); err != nil {
		return err
	}
	a.wrapShellScripts()
	front, err := a.frontMatter()
	if err != nil {
		return err
	}
	a.bodyStart = strings.Count(front, "\n") + 3
	body := a.rewriteBody()
	a.out[SkillFile] = []byte("---\n" + front + "---\n" + body)
	a.removeSecrets()
	return nil
}

// findSkillFile returns SKILL.md (any case) at the top of the source.
func (a *adapter) findSkillFile() (srcFile, error) {
	var nested []string
	for _, f := range a.files {
		if strings.EqualFold(f.path, SkillFile) {
			if f.path != SkillFile {
				a.rep.MovedFiles = append(a.rep.MovedFiles, FileMove{From: f.path, To: SkillFile})
			}
			return f, nil
		}
		if strings.EqualFold(path.Base(f.path), SkillFile) {
			nested = append(nested, path.Dir(f.path))
		}
	}
	if len(nested) > 0 {
		slices.Sort(nested)
		if len(nested) > 10 {
			nested = append(nested[:10], "...")
		}
		return srcFile{}, fmt.Errorf("no SKILL.md at the top, but these subdirectories hold skills: %s; import each of them", strings.Join(nested, ", "))
	}
	return srcFile{}, errors.New("no SKILL.md found; a skill is a directory with a SKILL.md file")
}

// readFrontMatter parses SKILL.md leniently: a file without front matter is
// all body.
func (a *adapter) readFrontMatter(f srcFile) error {
	a.fields = map[string]*yaml.Node{}
	if !isText(f.data) {
		return errors.New("SKILL.md is not UTF-8 text")
	}
	text := strings.TrimPrefix(strings.ReplaceAll(string(f.data), "\r\n", "\n"), "\ufeff")
	if !strings.HasPrefix(text, "---") {
		a.body = text
		a.rep.review(SkillFile, 1, "the source SKILL.md had no front matter; name and description were derived, check them")
		return nil
	}
	fm, err := splitFrontMatter(text)
	if err != nil {
		return fmt.Errorf("SKILL.md: %w", err)
	}
	a.body = fm.body
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(fm.yaml), &doc); err != nil {
		line, reason := yamlErrorLine(err, fm.offset)
		return fmt.Errorf("SKILL.md:%d: front matter is not valid YAML: %s", line, reason)
	}
	if len(doc.Content) == 0 {
		return nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return errors.New("SKILL.md: the front matter is not a mapping of fields")
	}
	if bad := checkNoAliases(root); bad != nil {
		return fmt.Errorf("SKILL.md:%d: YAML anchors and aliases are not supported; write the values out", fm.offset+bad.Line)
	}
	if bad, why := checkTreeLimits(root); bad != nil {
		return fmt.Errorf("SKILL.md:%d: %s", fm.offset+bad.Line, why)
	}
	for _, kv := range pairs(root) {
		if kv[0].Kind != yaml.ScalarNode || a.fields[kv[0].Value] != nil {
			a.rep.removed(kv[0].Value, "not a plain field name, or given twice")
			continue
		}
		a.fields[kv[0].Value] = kv[1]
		a.keys = append(a.keys, kv[0])
	}
	return nil
}

// detect recognises the source format and says by which signals.
func (a *adapter) detect() (Format, []string) {
	var sig []string
	if md := a.fields["metadata"]; md != nil && md.Kind == yaml.MappingNode {
		for _, kv := range pairs(md) {
			if slices.Contains(openClawBlocks, kv[0].Value) {
				sig = append(sig, "metadata."+kv[0].Value)
			}
		}
	}
	for _, k := range []string{"version", "homepage", "command-dispatch", "command-tool", "command-arg-mode"} {
		if a.fields[k] != nil {
			sig = append(sig, k)
		}
	}
	if a.hasClawHubDir() {
		sig = append(sig, ".clawhub/")
	}
	if len(sig) > 0 {
		return FormatOpenClaw, sig
	}
	for _, f := range a.files {
		if f.path == "agents/openai.yaml" {
			sig = append(sig, "agents/openai.yaml")
		}
	}
	if md := a.fields["metadata"]; md != nil && md.Kind == yaml.MappingNode {
		for _, kv := range pairs(md) {
			if kv[0].Value == "short-description" {
				sig = append(sig, "metadata.short-description")
			}
		}
	}
	if len(sig) > 0 {
		return FormatOpenAI, sig
	}
	for _, k := range claudeKeys {
		if a.fields[k] != nil {
			sig = append(sig, k)
		}
	}
	if len(sig) > 0 {
		return FormatClaude, sig
	}
	return FormatSilas, []string{"only Silas fields"}
}

func (a *adapter) hasClawHubDir() bool {
	for _, d := range a.rep.DroppedFiles {
		if d.Path == ".clawhub/" || d.Path == ".clawdhub/" {
			return true
		}
	}
	return false
}

// textExts are documents that belong in references/.
var textExts = []string{".md", ".markdown", ".txt", ".rst", ".html", ".htm", ".pdf"}

// relocate maps every source file into the Silas layout.
func (a *adapter) relocate(skillMD srcFile) error {
	a.out = map[string][]byte{}
	a.moves = map[string]string{}
	from := map[string]string{}
	for _, f := range a.files {
		if f.path == skillMD.path {
			continue
		}
		if f.path == "agents/openai.yaml" {
			a.openaiYAML = f.data
			a.rep.DroppedFiles = append(a.rep.DroppedFiles, DroppedFile{Path: f.path, Reason: "OpenAI UI-only metadata; its interface fields were translated into ui"})
			continue
		}
		to := silasPath(f.path, f.data)
		if prev, dup := from[to]; dup {
			return fmt.Errorf("%s and %s would both become %s; rename one of them in the source", prev, f.path, to)
		}
		from[to] = f.path
		if to != f.path {
			a.moves[f.path] = to
			a.rep.MovedFiles = append(a.rep.MovedFiles, FileMove{From: f.path, To: to})
		}
		a.out[to] = f.data
	}
	return nil
}

// silasPath is where a source file goes in the Silas layout.
func silasPath(p string, data []byte) string {
	top, rest, nested := strings.Cut(p, "/")
	if !nested {
		upper := strings.ToUpper(p)
		switch ext := strings.ToLower(path.Ext(p)); {
		case strings.HasPrefix(upper, "LICENSE") || strings.HasPrefix(upper, "README"):
			return p
		case ext == ".py" || isShellScript(p, data):
			return DirScripts + "/" + p
		case slices.Contains(textExts, ext):
			return DirReferences + "/" + p
		}
		return DirAssets + "/" + p
	}
	switch top {
	case DirScripts, DirReferences, DirAssets:
		return p
	case "reference", "docs", "doc":
		return DirReferences + "/" + rest
	case "script", "bin", "tools":
		return DirScripts + "/" + rest
	}
	return DirAssets + "/" + p
}

// chooseName picks the skill's name: the option, the front matter name,
// or the directory name, normalised to the Silas rule.
func (a *adapter) chooseName() error {
	if a.opts.Name != "" {
		if err := manifest.ValidName(a.opts.Name); err != nil {
			return err
		}
		a.name = a.opts.Name
		return nil
	}
	raw, from := a.dirName, "the directory name"
	if n := a.fields["name"]; n != nil && n.Kind == yaml.ScalarNode && n.Value != "" {
		raw, from = n.Value, ""
	}
	a.name = normalizeName(raw)
	if err := manifest.ValidName(a.name); err != nil {
		return fmt.Errorf("cannot derive a skill name from %q: %w; pass a name", raw, err)
	}
	switch {
	case from != "":
		a.rep.translated("(directory name)", "name", fmt.Sprintf("the source has no name; %q was derived from %s", a.name, from))
	case raw != a.name:
		a.rep.translated("name", "name", fmt.Sprintf("%q normalised to %q (lowercase letters, digits, single hyphens)", raw, a.name))
	}
	return nil
}

var nonNameRE = regexp.MustCompile(`[^a-z0-9]+`)

func normalizeName(s string) string {
	n := strings.Trim(nonNameRE.ReplaceAllString(strings.ToLower(s), "-"), "-")
	if len(n) > manifest.MaxNameLen {
		n = strings.TrimRight(n[:manifest.MaxNameLen], "-")
	}
	return n
}

// rewriteBody points the body at moved files, lists the generated entry
// points and flags what Silas does not support.
func (a *adapter) rewriteBody() string {
	body := a.body
	froms := make([]string, 0, len(a.moves))
	for f := range a.moves {
		froms = append(froms, f)
	}
	slices.SortFunc(froms, func(x, y string) int { return len(y) - len(x) })
	for _, f := range froms {
		re := regexp.MustCompile("(^|[\\s(\\[<\"'`]|\\./)" + regexp.QuoteMeta(f) + "($|[\\s)\\]>\"'`#?,;:!]|\\.(?:\\s|$))")
		body = re.ReplaceAllString(body, "${1}"+a.moves[f]+"${2}")
	}
	for i, line := range strings.Split(body, "\n") {
		n := a.bodyLine() + i
		switch {
		case strings.Contains(line, "!`"):
			a.rep.review(SkillFile, n, "dynamic context injection (!`command`) is not supported; the command stays as text and is not run")
		case strings.Contains(line, "$ARGUMENTS") || strings.Contains(line, "{baseDir}") || strings.Contains(line, "${CLAUDE_SKILL_DIR}"):
			a.rep.review(SkillFile, n, "template placeholders ($ARGUMENTS, {baseDir}) are not expanded; script arguments come from script_args")
		}
		for _, w := range a.wrapped {
			if strings.Contains(line, w.Original) || strings.Contains(line, path.Base(w.Original)) {
				a.rep.review(SkillFile, n, fmt.Sprintf("mentions %s; the executor runs %s instead (arguments: %s)", w.Original, w.Entrypoint, strings.Join(w.Args, ", ")))
				break
			}
		}
	}
	if len(a.wrapped) > 0 {
		var b strings.Builder
		b.WriteString(strings.TrimRight(body, "\n"))
		b.WriteString("\n\n## Imported scripts\nThese shell scripts run through Python entry points with explicit arguments (added by `silas skills import`):\n\n")
		for _, w := range a.wrapped {
			args := "none"
			if len(w.Args) > 0 {
				args = strings.Join(w.Args, ", ")
			}
			fmt.Fprintf(&b, "- `%s` runs `%s`; arguments: %s.\n", w.Entrypoint, w.Original, args)
		}
		body = b.String()
	}
	if !strings.HasSuffix(body, "\n") {
		body += "\n"
	}
	return body
}

// bodyLine is the line of the adapted SKILL.md the body starts on.
func (a *adapter) bodyLine() int { return a.bodyStart }

// removeSecrets drops credential literals from every text file, recording
// the file, line and kind (never the value).
func (a *adapter) removeSecrets() {
	red := guardrails.NewSecretRedactor()
	paths := make([]string, 0, len(a.out))
	for p := range a.out {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		data := a.out[p]
		if !isText(data) {
			if ext := strings.ToLower(path.Ext(p)); !slices.Contains([]string{".png", ".jpg", ".jpeg", ".gif", ".webp", ".ico", ".pdf", ".woff", ".woff2", ".ttf", ".otf"}, ext) {
				a.rep.review(p, 0, "binary file; it was not scanned for secrets, check it")
			}
			continue
		}
		found := findSecrets(p, data, red)
		if len(found) == 0 {
			continue
		}
		lines := strings.Split(string(data), "\n")
		for _, f := range found {
			a.rep.RemovedSecrets = append(a.rep.RemovedSecrets, SecretRemoval{File: p, Line: f.line, Kind: f.kind})
			a.rep.review(p, f.line, fmt.Sprintf("held a credential (%s), now removed; read it at run time from a keystore ref_id in a variable listed in requirements.env", f.kind))
			idx := f.line - 1
			if f.kind == guardrails.SecretPrivateKey {
				end := idx
				for end < len(lines) && !(strings.Contains(lines[end], "-----END") && end > idx) {
					end++
				}
				if end == len(lines) {
					end = idx
				}
				for k := idx; k <= end; k++ {
					lines[k] = ""
				}
				lines[idx] = guardrails.SecretPlaceholder
				continue
			}
			lines[idx], _ = red.Redact(lines[idx])
			if again := findSecrets(p, []byte(lines[idx]), red); len(again) > 0 {
				lines[idx] = "" // whatever is left still looks like a secret
			}
		}
		a.out[p] = []byte(strings.Join(lines, "\n"))
	}
}
