package skills

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// openClawBlocks are the metadata keys OpenClaw reads its runtime block from.
var openClawBlocks = []string{"openclaw", "clawdbot", "clawdis"}

// claudeKeys are Claude skill fields Silas does not have.
var claudeKeys = []string{"allowed-tools", "context", "agent", "model", "hooks", "argument-hint",
	"disable-model-invocation", "user-invocable"}

// removalReasons explain why platform fields are stripped.
var removalReasons = map[string]string{
	"allowed-tools":    "Silas grants tools per work item (plan and access level), never per skill",
	"context":          "forked sub-agent contexts are not supported; the executor runs skills in the work item's context",
	"agent":            "sub-agent selection is not supported",
	"model":            "the model is chosen by Silas's model configuration, not by a skill",
	"hooks":            "skill hooks would run commands outside the approved plan",
	"argument-hint":    "arguments are declared per script in script_args",
	"user-invocable":   "Silas's activation modes replace it",
	"command-dispatch": "direct tool dispatch is not supported; the executor calls skill scripts through the skill tool",
	"command-tool":     "direct tool dispatch is not supported",
	"command-arg-mode": "direct tool dispatch is not supported",
}

// frontMatter builds the adapted front matter (YAML text ending in "\n").
func (a *adapter) frontMatter() (string, error) {
	var out []*yaml.Node
	put := func(k string, v *yaml.Node) { out = append(out, strNode(k), v) }
	put("name", strNode(a.name))
	put("description", strNode(a.description()))

	var req Requirements
	ui := map[string]string{}
	meta := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	activation := ""
	for _, k := range a.keys {
		key, v := k.Value, a.fields[k.Value]
		switch key {
		case "name", "description":
		case "license":
			if v.Kind == yaml.ScalarNode {
				put("license", strNode(v.Value))
			} else {
				a.rep.removed("license", "not text")
			}
		case "activation":
			activation = v.Value
		case "composes_with", "script_args", "type", "auth_strategy", "initial_permissions", "available_permissions":
			if key != "script_args" {
				out = append(out, strNode(key), v)
			}
		case "ui":
			a.uiFrom(v, ui)
		case "requirements":
			a.requirementsFrom(v, &req)
		case "metadata":
			a.metadataFrom(v, meta, &req, ui)
		case "version", "homepage":
			if v.Kind == yaml.ScalarNode && v.Value != "" {
				setMeta(meta, key, v.Value)
				a.rep.translated(key, "metadata."+key, "kept as metadata")
			} else {
				a.rep.removed(key, "not text")
			}
		case "disable-model-invocation":
			if v.Value == "true" {
				if activation == "" {
					activation = string(ActivationManual)
				}
				a.rep.translated(key, "activation: manual", "the skill runs only when the owner names it")
			} else {
				a.rep.removed(key, "false is Silas's default (activation: auto)")
			}
		default:
			reason, known := removalReasons[key]
			if !known {
				reason = "not a Silas skill field"
			}
			a.rep.removed(key, reason)
			if key == "hooks" || strings.HasPrefix(key, "command-") {
				a.rep.review(SkillFile, 0, fmt.Sprintf("the source used %s; check the instructions do not rely on it", key))
			}
		}
	}
	a.openAIInterface(ui, &activation)
	if activation != "" {
		switch Activation(activation) {
		case ActivationAuto, ActivationManual, ActivationBackground:
			put("activation", strNode(activation))
		default:
			a.rep.removed("activation", fmt.Sprintf("%q is not a Silas activation mode", activation))
		}
	}
	if n := uiNode(ui, a.out, a.rep); n != nil {
		put("ui", n)
	}
	if n := requirementsNode(req); n != nil {
		put("requirements", n)
	}
	if len(meta.Content) > 0 {
		put("metadata", meta)
	}
	if n := a.scriptArgsNode(); n != nil {
		put("script_args", n)
	}
	doc := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: out}
	var b strings.Builder
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return "", fmt.Errorf("render front matter: %w", err)
	}
	if err := enc.Close(); err != nil {
		return "", fmt.Errorf("render front matter: %w", err)
	}
	return b.String(), nil
}

// description returns the source's description, or one derived from the
// body's first paragraph.
func (a *adapter) description() string {
	if n := a.fields["description"]; n != nil && n.Kind == yaml.ScalarNode && strings.TrimSpace(n.Value) != "" {
		d := strings.TrimSpace(n.Value)
		if c := utf8.RuneCountInString(d); c > MaxDescriptionChars {
			a.rep.review(SkillFile, 0, fmt.Sprintf("the description is %d characters, more than %d; shorten it to when to use the skill", c, MaxDescriptionChars))
		}
		return d
	}
	var para []string
	for _, l := range strings.Split(a.body, "\n") {
		t := strings.TrimSpace(l)
		switch {
		case t == "" && len(para) > 0:
			goto done
		case t == "" || strings.HasPrefix(t, "#"):
			continue
		}
		para = append(para, t)
	}
done:
	d := strings.Join(para, " ")
	if r := []rune(d); len(r) > MaxDescriptionChars {
		d = string(r[:MaxDescriptionChars-3]) + "..."
	}
	if d == "" {
		d = "Imported skill " + a.name
	}
	a.rep.translated("(body)", "description", "the source has no description; it was taken from the first paragraph")
	a.rep.review(SkillFile, 0, "write a description that says when to use the skill; the derived one is a placeholder")
	return d
}

// uiFrom keeps the Silas ui keys.
func (a *adapter) uiFrom(v *yaml.Node, ui map[string]string) {
	if v.Kind != yaml.MappingNode {
		a.rep.removed("ui", "not a mapping")
		return
	}
	for _, kv := range pairs(v) {
		if slices.Contains(uiKeys, kv[0].Value) && kv[1].Kind == yaml.ScalarNode {
			ui[kv[0].Value] = kv[1].Value
			continue
		}
		a.rep.removed("ui."+kv[0].Value, "not a Silas ui field")
	}
}

// requirementsFrom reads the source's requirements leniently.
func (a *adapter) requirementsFrom(v *yaml.Node, req *Requirements) {
	switch v.Kind {
	case yaml.ScalarNode:
		req.Notes = append(req.Notes, v.Value)
		return
	case yaml.SequenceNode:
		req.Notes = append(req.Notes, scalarList(v)...)
		return
	case yaml.MappingNode:
	default:
		a.rep.removed("requirements", "not text, a list or a mapping")
		return
	}
	for _, kv := range pairs(v) {
		switch k, val := kv[0].Value, kv[1]; k {
		case "env":
			req.Env = append(req.Env, scalarList(val)...)
		case "binaries", "bins":
			req.Binaries = append(req.Binaries, scalarList(val)...)
		case "packages":
			req.Packages = append(req.Packages, scalarList(val)...)
		case "python_packages":
			req.PythonPackages = append(req.PythonPackages, scalarList(val)...)
		case "network":
			req.Network = val.Value == "true"
		case "notes":
			req.Notes = append(req.Notes, scalarList(val)...)
		default:
			a.rep.removed("requirements."+k, "not a Silas requirements key")
		}
	}
}

// metadataFrom keeps metadata, translating OpenClaw's runtime block and
// OpenAI's short-description.
func (a *adapter) metadataFrom(v *yaml.Node, meta *yaml.Node, req *Requirements, ui map[string]string) {
	if v.Kind == yaml.ScalarNode {
		// OpenClaw allows metadata as one line of JSON.
		var m map[string]any
		if err := json.Unmarshal([]byte(v.Value), &m); err != nil {
			a.rep.removed("metadata", "not a mapping")
			return
		}
		var n yaml.Node
		if err := n.Encode(m); err != nil {
			a.rep.removed("metadata", "not a mapping")
			return
		}
		v = &n
	}
	if v.Kind != yaml.MappingNode {
		a.rep.removed("metadata", "not a mapping")
		return
	}
	for _, kv := range pairs(v) {
		k, val := kv[0].Value, kv[1]
		switch {
		case slices.Contains(openClawBlocks, k):
			a.openClawBlock(k, val, meta, req)
		case k == "short-description":
			if _, set := ui["short_description"]; !set && val.Kind == yaml.ScalarNode {
				ui["short_description"] = val.Value
			}
			a.rep.translated("metadata.short-description", "ui.short_description", "Silas keeps UI text under ui")
		default:
			meta.Content = append(meta.Content, strNode(k), val)
		}
	}
}

// openClawBlock translates metadata.openclaw (or an alias).
func (a *adapter) openClawBlock(block string, v *yaml.Node, meta *yaml.Node, req *Requirements) {
	pfx := "metadata." + block
	if v.Kind != yaml.MappingNode {
		a.rep.removed(pfx, "not a mapping")
		return
	}
	for _, kv := range pairs(v) {
		k, val := kv[0].Value, kv[1]
		field := pfx + "." + k
		switch k {
		case "requires":
			if val.Kind != yaml.MappingNode {
				a.rep.removed(field, "not a mapping")
				continue
			}
			for _, rkv := range pairs(val) {
				rk, rv := rkv[0].Value, rkv[1]
				switch rk {
				case "env":
					req.Env = append(req.Env, scalarList(rv)...)
					a.rep.translated(field+".env", "requirements.env", "declared environment variables")
				case "bins":
					req.Binaries = append(req.Binaries, scalarList(rv)...)
					a.rep.translated(field+".bins", "requirements.binaries", "required programs")
				case "anyBins":
					alts := scalarList(rv)
					req.Notes = append(req.Notes, "needs one of: "+strings.Join(alts, ", "))
					a.rep.translated(field+".anyBins", "requirements.notes", "alternatives are kept as a note")
					a.rep.review(SkillFile, 0, "the skill needs one of "+strings.Join(alts, ", ")+" in the sandbox")
				default:
					a.rep.removed(field+"."+rk, "not supported by Silas")
					a.rep.review(SkillFile, 0, fmt.Sprintf("the source required %s.%s; check the skill works without it", field, rk))
				}
			}
		case "primaryEnv":
			if val.Kind == yaml.ScalarNode && envNameRE.MatchString(val.Value) {
				req.Env = append(req.Env, val.Value)
				a.rep.translated(field, "requirements.env", "the credential variable")
				a.rep.review(SkillFile, 0, fmt.Sprintf("%s held the API credential; in Silas it holds a keystore ref_id, so the script must read the secret from the keyring with it", val.Value))
			} else {
				a.rep.removed(field, "not an environment variable name")
			}
		case "homepage":
			if val.Kind == yaml.ScalarNode {
				setMeta(meta, "homepage", val.Value)
				a.rep.translated(field, "metadata.homepage", "kept as metadata")
			}
		case "install":
			a.rep.removed(field, "install steps are never run by Silas")
			a.rep.review(SkillFile, 0, "the source declared install steps; the programs they install must already exist in the sandbox")
		case "emoji":
			a.rep.removed(field, "UI decoration without a Silas field")
		case "os":
			a.rep.removed(field, "Silas runs skills on its own sandbox platform")
		default:
			a.rep.removed(field, "not supported by Silas")
		}
	}
}

// openAIInterface translates agents/openai.yaml.
func (a *adapter) openAIInterface(ui map[string]string, activation *string) {
	if a.openaiYAML == nil {
		return
	}
	var doc struct {
		Interface map[string]any `yaml:"interface"`
		Policy    map[string]any `yaml:"policy"`
		Deps      any            `yaml:"dependencies"`
	}
	if err := yaml.Unmarshal(a.openaiYAML, &doc); err != nil {
		a.rep.review("agents/openai.yaml", 0, "could not be read, so its UI fields were not translated: "+err.Error())
		return
	}
	keys := make([]string, 0, len(doc.Interface))
	for k := range doc.Interface {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		s, isText := doc.Interface[k].(string)
		field := "agents/openai.yaml: interface." + k
		switch {
		case k == "display_name" && isText:
			setIfEmpty(ui, "display_name", s)
			a.rep.translated(field, "ui.display_name", "UI metadata")
		case k == "short_description" && isText:
			setIfEmpty(ui, "short_description", s)
			a.rep.translated(field, "ui.short_description", "UI metadata")
		case (k == "icon_small" || k == "icon_large") && isText && ui["icon"] == "":
			setIfEmpty(ui, "icon", s)
			a.rep.translated(field, "ui.icon", "UI metadata")
		default:
			a.rep.removed(field, "UI-only metadata without a Silas field")
		}
	}
	if v, ok := doc.Policy["allow_implicit_invocation"].(bool); ok && !v {
		if *activation == "" {
			*activation = string(ActivationManual)
		}
		a.rep.translated("agents/openai.yaml: policy.allow_implicit_invocation", "activation: manual", "the skill runs only when the owner names it")
	}
	if doc.Deps != nil {
		a.rep.removed("agents/openai.yaml: dependencies", "tool dependencies are granted per work item")
		a.rep.review("agents/openai.yaml", 0, "the source declared tool dependencies (for example MCP servers); check the skill works with Silas's tools")
	}
}

// uiNode renders ui, dropping an icon that is not a file of the skill.
func uiNode(ui map[string]string, files map[string][]byte, rep *TransformationReport) *yaml.Node {
	if icon, ok := ui["icon"]; ok {
		p, err := skillPath(icon)
		if _, exists := files[p]; err != nil || !exists {
			rep.removed("ui.icon", fmt.Sprintf("%s is not a file of the skill", icon))
			delete(ui, "icon")
		} else {
			ui["icon"] = p
		}
	}
	n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for _, k := range uiKeys {
		if v, ok := ui[k]; ok && v != "" {
			n.Content = append(n.Content, strNode(k), strNode(v))
		}
	}
	if len(n.Content) == 0 {
		return nil
	}
	return n
}

// requirementsNode renders requirements (nil when empty).
func requirementsNode(r Requirements) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	list := func(k string, vs []string) {
		vs = dedupe(vs)
		if len(vs) == 0 {
			return
		}
		s := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle}
		for _, v := range vs {
			s.Content = append(s.Content, strNode(v))
		}
		n.Content = append(n.Content, strNode(k), s)
	}
	var env []string
	for _, e := range r.Env {
		if envNameRE.MatchString(e) {
			env = append(env, e)
		}
	}
	list("env", env)
	if r.Network {
		n.Content = append(n.Content, strNode("network"), &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "true"})
	}
	list("binaries", r.Binaries)
	list("packages", r.Packages)
	list("python_packages", r.PythonPackages)
	list("notes", r.Notes)
	if len(n.Content) == 0 {
		return nil
	}
	return n
}

// scriptArgsNode merges the source's script_args with the generated
// entry points' schemas.
func (a *adapter) scriptArgsNode() *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	if src := a.fields["script_args"]; src != nil && src.Kind == yaml.MappingNode {
		for _, kv := range pairs(src) {
			p, err := skillPath(kv[0].Value)
			if err == nil {
				if to, moved := a.moves[p]; moved {
					p = to
				}
			}
			if _, wrapped := a.wrappedArgs[p]; wrapped {
				continue
			}
			n.Content = append(n.Content, strNode(p), kv[1])
		}
	}
	for _, w := range a.wrapped {
		n.Content = append(n.Content, strNode(w.Entrypoint), a.wrappedArgs[w.Entrypoint])
	}
	paths := make([]string, 0, len(a.out))
	for p := range a.out {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		if dir, file := splitDir(p); dir == DirScripts && strings.HasSuffix(file, ".py") && !hasKey(n, p) {
			a.rep.review(p, 0, "has no script_args entry, so it runs only without arguments; declare its arguments")
		}
	}
	if len(n.Content) == 0 {
		return nil
	}
	return n
}

func splitDir(p string) (string, string) {
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return "", p
	}
	return p[:i], p[i+1:]
}

func hasKey(m *yaml.Node, k string) bool {
	for _, kv := range pairs(m) {
		if kv[0].Value == k {
			return true
		}
	}
	return false
}

func strNode(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

func setMeta(meta *yaml.Node, k, v string) {
	if hasKey(meta, k) {
		return
	}
	meta.Content = append(meta.Content, strNode(k), strNode(v))
}

func setIfEmpty(m map[string]string, k, v string) {
	if m[k] == "" {
		m[k] = v
	}
}

// scalarList reads a scalar or a list of scalars.
func scalarList(n *yaml.Node) []string {
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Tag == "!!null" || n.Value == "" {
			return nil
		}
		return []string{n.Value}
	case yaml.SequenceNode:
		var out []string
		for _, c := range n.Content {
			if c.Kind == yaml.ScalarNode && c.Value != "" {
				out = append(out, c.Value)
			}
		}
		return out
	}
	return nil
}

func dedupe(vs []string) []string {
	var out []string
	for _, v := range vs {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}
