package skills

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/silas-ai/silas/skills/manifest"
)

// MaxDescriptionChars is the spec's hard bound on a description (10.1);
// the configured bound (skills.validation.description_max_chars) may only
// be lower.
const MaxDescriptionChars = 1024

// Top-level directories of a skill (spec 10.1).
const (
	DirScripts    = "scripts"
	DirReferences = "references"
	DirAssets     = "assets"
)

// frontMatterKeys are the fields SKILL.md may set (spec 10.1 and, for
// connection skills, 10.6).
var frontMatterKeys = []string{"name", "description", "license", "requirements", "ui", "activation",
	"composes_with", "script_args", "metadata", "type", "auth_strategy", "initial_permissions", "available_permissions"}

// requirementKeys are the keys of a requirements mapping.
var requirementKeys = []string{"env", "network", "binaries", "packages", "python_packages", "notes"}

// uiKeys are the keys of the ui mapping.
var uiKeys = []string{"display_name", "icon", "short_description"}

// ParseDir parses the skill directory at dir (its base name must equal the
// skill's name), reading it through an os.Root so nothing outside it can be
// reached.
func ParseDir(dir string) (*Skill, error) {
	name := filepath.Base(filepath.Clean(dir))
	entries, err := manifest.ReadDir(dir)
	if err != nil {
		return nil, &ParseError{Dir: name, Problems: []Problem{{File: ".", Message: err.Error()}}}
	}
	return parseEntries(name, entries)
}

// Parse parses the skill whose directory is the root of fsys; dirName is
// that directory's name, which the skill's name must equal. Every
// violation of spec 10.1 is reported in one *ParseError (ErrInvalidSkill)
// naming file, line and field.
func Parse(fsys fs.FS, dirName string) (*Skill, error) {
	entries, err := manifest.Read(fsys)
	if err != nil {
		return nil, &ParseError{Dir: dirName, Problems: []Problem{{File: ".", Message: err.Error()}}}
	}
	return parseEntries(dirName, entries)
}

// parseEntries parses a skill from its files (sorted by path).
func parseEntries(dirName string, entries []manifest.Entry) (*Skill, error) {
	ps := &problems{}
	checkLayout(entries, ps)
	i, found := slices.BinarySearchFunc(entries, SkillFile, func(e manifest.Entry, p string) int { return strings.Compare(e.Path, p) })
	if !found {
		ps.add(SkillFile, 0, "", "is missing; a skill is a directory with a SKILL.md file")
		return nil, &ParseError{Dir: dirName, Problems: ps.list}
	}
	s := &Skill{entries: entries, lines: map[string]int{}}
	parseSkillFile(s, entries[i].Data, dirName, ps)
	collectScripts(s, ps)
	if len(ps.list) > 0 {
		return nil, &ParseError{Dir: dirName, Problems: ps.list}
	}
	m, err := manifest.New(s.Name, s.Version, entries)
	if err != nil {
		return nil, &ParseError{Dir: dirName, Problems: []Problem{{File: ".", Message: err.Error()}}}
	}
	s.manifest = m
	return s, nil
}

// checkLayout allows SKILL.md, LICENSE* and README* at the top and
// everything else under scripts/, references/ and assets/.
func checkLayout(entries []manifest.Entry, ps *problems) {
	for _, e := range entries {
		top, _, nested := strings.Cut(e.Path, "/")
		if nested {
			switch top {
			case DirScripts, DirReferences, DirAssets:
				continue
			}
			ps.add(e.Path, 0, "", "is in %s/, which a skill does not have; put scripts in scripts/, documents in references/, templates and data in assets/", top)
			continue
		}
		upper := strings.ToUpper(top)
		if top == SkillFile || strings.HasPrefix(upper, "LICENSE") || strings.HasPrefix(upper, "README") {
			continue
		}
		if strings.EqualFold(top, SkillFile) {
			ps.add(e.Path, 0, "", "must be named SKILL.md exactly")
			continue
		}
		ps.add(e.Path, 0, "", "is not allowed at the top of a skill; put scripts in scripts/, documents in references/, templates and data in assets/")
	}
}

// parseSkillFile parses SKILL.md into s.
func parseSkillFile(s *Skill, data []byte, dirName string, ps *problems) {
	if len(data) > MaxSkillFileBytes {
		ps.add(SkillFile, 0, "", "is %d bytes, at most %d are allowed; move detail into references/", len(data), MaxSkillFileBytes)
		return
	}
	if !utf8.Valid(data) {
		ps.add(SkillFile, 0, "", "is not valid UTF-8")
		return
	}
	fm, err := splitFrontMatter(string(data))
	if err != nil {
		ps.add(SkillFile, 1, "", "%v", err)
		return
	}
	s.Body = fm.body
	s.BodyLine = fm.bodyLine
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(fm.yaml), &doc); err != nil {
		line, reason := yamlErrorLine(err, fm.offset)
		ps.add(SkillFile, line, "", "front matter is not valid YAML: %s", reason)
		return
	}
	at := func(n *yaml.Node) int {
		if n == nil || n.Line == 0 {
			return fm.offset
		}
		return fm.offset + n.Line
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		ps.add(SkillFile, 2, "", "front matter must be a mapping of fields; set at least name and description")
		return
	}
	root := doc.Content[0]
	if bad := checkNoAliases(root); bad != nil {
		ps.add(SkillFile, at(bad), "", "YAML anchors and aliases are not allowed; write the value out")
		return
	}
	if bad, why := checkTreeLimits(root); bad != nil {
		ps.add(SkillFile, at(bad), "", "%s; keep the front matter small and move data into assets/", why)
		return
	}
	fields := map[string]*yaml.Node{}
	for _, kv := range pairs(root) {
		k := kv[0]
		if k.Kind != yaml.ScalarNode {
			ps.add(SkillFile, at(k), "", "field names must be plain text")
			continue
		}
		if !slices.Contains(frontMatterKeys, k.Value) {
			ps.add(SkillFile, at(k), k.Value, "is not a Silas skill field (allowed: %s); `silas skills import` strips platform-specific fields", strings.Join(frontMatterKeys, ", "))
			continue
		}
		if fields[k.Value] != nil {
			ps.add(SkillFile, at(k), k.Value, "appears twice")
			continue
		}
		fields[k.Value] = kv[1]
		s.lines[k.Value] = at(k)
	}
	d := fmDecoder{at: at, ps: ps}

	// name
	if n := fields["name"]; n == nil {
		ps.add(SkillFile, 2, "name", "is missing; set it to the directory name %q", dirName)
	} else if name, ok := d.text(n, "name"); ok {
		s.Name = name
		if err := manifest.ValidName(name); err != nil {
			ps.add(SkillFile, at(n), "name", "%v", err)
		} else if dirName != "" && name != dirName {
			ps.add(SkillFile, at(n), "name", "%q does not match the directory name %q; rename one of them", name, dirName)
		}
	}
	// description
	if n := fields["description"]; n == nil {
		ps.add(SkillFile, 2, "description", "is missing; say what the skill does and when to use it")
	} else if desc, ok := d.text(n, "description"); ok {
		s.Description = strings.TrimSpace(desc)
		if s.Description == "" {
			ps.add(SkillFile, at(n), "description", "is empty; say what the skill does and when to use it")
		} else if c := utf8.RuneCountInString(s.Description); c > MaxDescriptionChars {
			ps.add(SkillFile, at(n), "description", "is %d characters long, at most %d are allowed; say when to use the skill and move detail into the body", c, MaxDescriptionChars)
		}
	}
	if n := fields["license"]; n != nil {
		s.License, _ = d.text(n, "license")
	}
	// activation
	s.Activation = ActivationAuto
	if n := fields["activation"]; n != nil {
		if v, ok := d.text(n, "activation"); ok {
			switch Activation(v) {
			case ActivationAuto, ActivationManual, ActivationBackground:
				s.Activation = Activation(v)
			default:
				ps.add(SkillFile, at(n), "activation", "%q is not a mode; use auto, manual or background", v)
			}
		}
	}
	if n := fields["ui"]; n != nil {
		s.UI = d.ui(n, entryPaths(s.entries))
	}
	if n := fields["composes_with"]; n != nil {
		for i, v := range d.textList(n, "composes_with") {
			if err := manifest.ValidName(v); err != nil {
				ps.add(SkillFile, at(n.Content[i]), "composes_with", "%v", err)
			}
			s.ComposesWith = append(s.ComposesWith, v)
		}
	}
	if n := fields["requirements"]; n != nil {
		s.Requirements = d.requirements(n)
	}
	if n := fields["metadata"]; n != nil {
		s.Metadata, s.Version = d.metadata(n)
	}
	d.connection(s, fields)
	if n := fields["script_args"]; n != nil {
		s.scripts = d.scriptArgs(n, entryPaths(s.entries))
	}
}

// fmDecoder reads front matter values, reporting problems on SKILL.md.
type fmDecoder struct {
	at func(*yaml.Node) int
	ps *problems
}

// text reads a string scalar. Numbers and booleans are refused for text
// fields, so `name: 123` is an error and not "123".
func (d fmDecoder) text(n *yaml.Node, field string) (string, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
		d.ps.add(SkillFile, d.at(n), field, "expected text, got %s", describeNode(n))
		return "", false
	}
	return n.Value, true
}

// textList reads a list of strings.
func (d fmDecoder) textList(n *yaml.Node, field string) []string {
	if n.Kind != yaml.SequenceNode {
		d.ps.add(SkillFile, d.at(n), field, "expected a list of text, got %s", describeNode(n))
		return nil
	}
	out := make([]string, 0, len(n.Content))
	for _, c := range n.Content {
		if v, ok := d.text(c, field); ok {
			out = append(out, v)
		}
	}
	return out
}

// mapping checks n is a mapping whose keys are in allowed and returns its
// values by key.
func (d fmDecoder) mapping(n *yaml.Node, field string, allowed []string) map[string]*yaml.Node {
	if n.Kind != yaml.MappingNode {
		d.ps.add(SkillFile, d.at(n), field, "expected a mapping, got %s", describeNode(n))
		return nil
	}
	out := map[string]*yaml.Node{}
	for _, kv := range pairs(n) {
		k := kv[0].Value
		switch {
		case allowed != nil && !slices.Contains(allowed, k):
			d.ps.add(SkillFile, d.at(kv[0]), field+"."+k, "is not allowed here; use %s", strings.Join(allowed, ", "))
		case out[k] != nil:
			d.ps.add(SkillFile, d.at(kv[0]), field+"."+k, "appears twice")
		default:
			out[k] = kv[1]
		}
	}
	return out
}

func (d fmDecoder) ui(n *yaml.Node, files map[string]bool) UI {
	var u UI
	m := d.mapping(n, "ui", uiKeys)
	if v := m["display_name"]; v != nil {
		u.DisplayName, _ = d.text(v, "ui.display_name")
	}
	if v := m["short_description"]; v != nil {
		u.ShortDescription, _ = d.text(v, "ui.short_description")
	}
	if v := m["icon"]; v != nil {
		if icon, ok := d.text(v, "ui.icon"); ok {
			p, err := skillPath(icon)
			switch {
			case err != nil:
				d.ps.add(SkillFile, d.at(v), "ui.icon", "%v", err)
			case !files[p]:
				d.ps.add(SkillFile, d.at(v), "ui.icon", "%s does not exist in the skill; add it under assets/", p)
			default:
				u.Icon = p
			}
		}
	}
	return u
}

func (d fmDecoder) requirements(n *yaml.Node) Requirements {
	var r Requirements
	switch n.Kind {
	case yaml.ScalarNode:
		if v, ok := d.text(n, "requirements"); ok {
			r.Notes = []string{v}
		}
		return r
	case yaml.SequenceNode:
		r.Notes = d.textList(n, "requirements")
		return r
	}
	m := d.mapping(n, "requirements", requirementKeys)
	if v := m["env"]; v != nil {
		for i, name := range d.textList(v, "requirements.env") {
			if !envNameRE.MatchString(name) {
				d.ps.add(SkillFile, d.at(v.Content[i]), "requirements.env", "%q is not an environment variable name", name)
				continue
			}
			r.Env = append(r.Env, name)
		}
	}
	if v := m["network"]; v != nil {
		if v.Kind != yaml.ScalarNode || v.Tag != "!!bool" {
			d.ps.add(SkillFile, d.at(v), "requirements.network", "expected true or false, got %s", describeNode(v))
		} else {
			r.Network = v.Value == "true"
		}
	}
	if v := m["binaries"]; v != nil {
		r.Binaries = d.textList(v, "requirements.binaries")
	}
	if v := m["packages"]; v != nil {
		r.Packages = d.textList(v, "requirements.packages")
	}
	if v := m["python_packages"]; v != nil {
		r.PythonPackages = d.textList(v, "requirements.python_packages")
	}
	if v := m["notes"]; v != nil {
		if v.Kind == yaml.ScalarNode {
			if t, ok := d.text(v, "requirements.notes"); ok {
				r.Notes = []string{t}
			}
		} else {
			r.Notes = d.textList(v, "requirements.notes")
		}
	}
	return r
}

// metadata decodes the metadata mapping and its version.
func (d fmDecoder) metadata(n *yaml.Node) (map[string]any, string) {
	if n.Kind != yaml.MappingNode {
		d.ps.add(SkillFile, d.at(n), "metadata", "expected a mapping of key-value pairs, got %s", describeNode(n))
		return nil, ""
	}
	var out map[string]any
	if err := n.Decode(&out); err != nil {
		d.ps.add(SkillFile, d.at(n), "metadata", "cannot be read: %v", err)
		return nil, ""
	}
	if _, err := json.Marshal(out); err != nil {
		d.ps.add(SkillFile, d.at(n), "metadata", "must hold only text keys and JSON-like values: %v", err)
		return nil, ""
	}
	version := ""
	for _, kv := range pairs(n) {
		if kv[0].Value != "version" {
			continue
		}
		v := kv[1]
		if v.Kind != yaml.ScalarNode || v.Tag == "!!null" || v.Value == "" || len(v.Value) > 64 || strings.ContainsAny(v.Value, " \t\r\n") {
			d.ps.add(SkillFile, d.at(v), "metadata.version", "expected a version such as 1.2.0 (at most 64 characters, no spaces), got %s", describeNode(v))
			continue
		}
		version = v.Value
	}
	return out, version
}

// connection reads the connection-skill fields of spec 10.6.
func (d fmDecoder) connection(s *Skill, fields map[string]*yaml.Node) {
	t := fields["type"]
	other := []string{"auth_strategy", "initial_permissions", "available_permissions"}
	if t == nil {
		for _, k := range other {
			if n := fields[k]; n != nil {
				d.ps.add(SkillFile, d.at(n), k, "belongs to connection skills; add type: connection or remove it")
			}
		}
		return
	}
	if v, ok := d.text(t, "type"); !ok || v != "connection" {
		if ok {
			d.ps.add(SkillFile, d.at(t), "type", "%q is not a skill type; the only type is connection (omit type for other skills)", v)
		}
		return
	}
	c := &Connection{}
	if n := fields["auth_strategy"]; n == nil {
		d.ps.add(SkillFile, d.at(t), "auth_strategy", "is required for connection skills; use %s", strings.Join(authStrategies, ", "))
	} else if v, ok := d.text(n, "auth_strategy"); ok {
		if !slices.Contains(authStrategies, v) {
			d.ps.add(SkillFile, d.at(n), "auth_strategy", "%q is not an auth strategy; use %s", v, strings.Join(authStrategies, ", "))
		}
		c.AuthStrategy = v
	}
	if n := fields["initial_permissions"]; n != nil {
		c.InitialPermissions = d.textList(n, "initial_permissions")
	}
	if n := fields["available_permissions"]; n != nil {
		c.AvailablePermissions = d.textList(n, "available_permissions")
	}
	for _, p := range c.InitialPermissions {
		if len(c.AvailablePermissions) > 0 && !slices.Contains(c.AvailablePermissions, p) {
			d.ps.add(SkillFile, d.at(fields["initial_permissions"]), "initial_permissions", "%q is not in available_permissions", p)
		}
	}
	s.Connection = c
}

// scriptArgs reads the per-script argument schemas.
func (d fmDecoder) scriptArgs(n *yaml.Node, files map[string]bool) []Script {
	if n.Kind != yaml.MappingNode {
		d.ps.add(SkillFile, d.at(n), "script_args", "expected a mapping of script path to argument schemas, got %s", describeNode(n))
		return nil
	}
	var out []Script
	seen := map[string]bool{}
	for _, kv := range pairs(n) {
		key, val := kv[0], kv[1]
		field := "script_args." + key.Value
		p, err := skillPath(key.Value)
		switch {
		case err != nil:
			d.ps.add(SkillFile, d.at(key), field, "%v", err)
			continue
		case !strings.HasPrefix(p, DirScripts+"/") || path.Ext(p) != ".py":
			d.ps.add(SkillFile, d.at(key), field, "only Python scripts under scripts/ take arguments (scripts/name.py)")
			continue
		case !files[p]:
			d.ps.add(SkillFile, d.at(key), field, "%s does not exist in the skill", p)
			continue
		case seen[p]:
			d.ps.add(SkillFile, d.at(key), field, "is declared twice")
			continue
		}
		seen[p] = true
		sc := Script{Path: p, Declared: true}
		if val.Kind == yaml.ScalarNode && val.Tag == "!!null" {
			out = append(out, sc) // declared without arguments
			continue
		}
		if val.Kind != yaml.MappingNode {
			d.ps.add(SkillFile, d.at(val), field, "expected a mapping of argument name to schema, got %s", describeNode(val))
			continue
		}
		if len(val.Content)/2 > MaxArgsPerScript {
			d.ps.add(SkillFile, d.at(val), field, "declares %d arguments, at most %d are allowed", len(val.Content)/2, MaxArgsPerScript)
			continue
		}
		names := map[string]bool{}
		for _, akv := range pairs(val) {
			name := akv[0].Value
			afield := field + "." + name
			if !argNameRE.MatchString(name) {
				d.ps.add(SkillFile, d.at(akv[0]), afield, "argument names are a lowercase letter then up to 63 lowercase letters, digits or '_'")
				continue
			}
			if names[name] {
				d.ps.add(SkillFile, d.at(akv[0]), afield, "appears twice")
				continue
			}
			names[name] = true
			if a := parseArgSpec(name, akv[1], afield, d.at, d.ps, false); a != nil {
				sc.Args = append(sc.Args, a)
			}
		}
		out = append(out, sc)
	}
	return out
}

// collectScripts adds every .py directly under scripts/ that script_args
// did not declare, and sorts the list by path. Modules in subdirectories
// (scripts/lib/) are helpers, invocable only when declared.
func collectScripts(s *Skill, _ *problems) {
	declared := map[string]bool{}
	for _, sc := range s.scripts {
		declared[sc.Path] = true
	}
	for _, e := range s.entries {
		dir, file := path.Split(e.Path)
		if dir == DirScripts+"/" && path.Ext(file) == ".py" && !declared[e.Path] {
			s.scripts = append(s.scripts, Script{Path: e.Path})
		}
	}
	slices.SortFunc(s.scripts, func(a, b Script) int { return strings.Compare(a.Path, b.Path) })
}

// skillPath cleans a path written in SKILL.md ("./assets/x.svg") and
// refuses one that is absolute or leaves the skill directory.
func skillPath(p string) (string, error) {
	switch {
	case p == "":
		return "", fmt.Errorf("the path is empty")
	case strings.HasPrefix(p, "/") || filepath.IsAbs(p) || strings.HasPrefix(p, "~"):
		return "", fmt.Errorf("%s is an absolute path; paths are relative to the skill directory", p)
	case strings.ContainsRune(p, '\\'):
		return "", fmt.Errorf("%s holds a backslash; use '/'", p)
	}
	for _, el := range strings.Split(p, "/") {
		if el == ".." {
			return "", fmt.Errorf("%s escapes the skill directory ('..'); keep every file inside the skill", p)
		}
	}
	c := path.Clean(p)
	if !fs.ValidPath(c) || c == "." {
		return "", fmt.Errorf("%s is not a file path inside the skill", p)
	}
	return c, nil
}

// entryPaths indexes the skill's file paths.
func entryPaths(entries []manifest.Entry) map[string]bool {
	m := make(map[string]bool, len(entries))
	for _, e := range entries {
		m[e.Path] = true
	}
	return m
}
