package config

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"

	"github.com/go-viper/mapstructure/v2"
	kmaps "github.com/knadh/koanf/maps"
	"github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/providers/confmap"
	"github.com/knadh/koanf/v2"
)

// DefaultPath is the file Load reads when LoadOptions.Path is empty, relative to the
// working directory.
const DefaultPath = "config/silas.yaml"

// LoadOptions says where configuration comes from besides the built-in defaults.
type LoadOptions struct {
	// Path is the YAML file. Empty means DefaultPath when that file exists, and no file
	// otherwise; an explicit Path that does not exist is an error.
	Path string
	// Environ is the environment as "NAME=value" entries, used for SILAS_* keys and
	// ${NAME} expansion. Nil means os.Environ(); pass an empty slice for none.
	Environ []string
	// Overrides take precedence over everything else (typically command-line flags).
	// Keys are full dotted paths such as "silas.channels.web.port"; string values are
	// parsed like environment values ("9000" for an integer, "a,b" for a list).
	Overrides map[string]any
}

// Load builds the effective configuration from the embedded defaults, the YAML file,
// SILAS_* environment variables and opts.Overrides (later wins), decodes it strictly
// and validates it. Every problem found is reported at once; the error wraps
// ErrUnknownKey and/or ErrInvalid, or ErrFileNotFound.
func Load(opts LoadOptions) (*Config, error) {
	environ := opts.Environ
	if environ == nil {
		environ = os.Environ()
	}
	path, data, err := readConfigFile(opts.Path)
	if err != nil {
		return nil, err
	}
	cfg, err := build(data, path, environMap(environ), opts.Overrides)
	if err != nil {
		return nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, report(err)
	}
	return cfg, nil
}

// readConfigFile returns the path and content of the file to load; data is nil when
// there is none.
func readConfigFile(path string) (string, []byte, error) {
	explicit := path != ""
	if !explicit {
		path = DefaultPath
	}
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		return path, data, nil
	case errors.Is(err, fs.ErrNotExist) && !explicit:
		return "", nil, nil
	case errors.Is(err, fs.ErrNotExist):
		return "", nil, fmt.Errorf("read config %s: %w; pass an existing file or omit the path to use %s", path, ErrFileNotFound, DefaultPath)
	default:
		return "", nil, fmt.Errorf("read config %s: %w", path, err)
	}
}

// build layers and decodes the configuration without validating it. data is the YAML
// file's content (nil for none) and path its name for messages.
func build(data []byte, path string, env map[string]string, overrides map[string]any) (*Config, error) {
	var (
		keys   = newKeyIndex()
		exp    = newExpander(env)
		layers []map[string]any
		errs   []error
	)
	add := func(raw map[string]any, source func(string) string) {
		c := &checker{keys: keys, source: source}
		if m := c.check(raw); m != nil {
			layers = append(layers, m)
		}
		errs = append(errs, c.errs...)
	}
	fixed := func(s string) func(string) string { return func(string) string { return s } }

	defaults, err := parseYAML([]byte(defaultsYAML))
	if err != nil {
		return nil, fmt.Errorf("parse built-in defaults: %w", err)
	}
	add(exp.expand(defaults).(map[string]any), fixed("in the built-in defaults"))

	if data != nil {
		file, err := parseYAML(data)
		if err != nil {
			return nil, fmt.Errorf("parse config %s: %w; fix the YAML syntax", path, err)
		}
		add(exp.expand(file).(map[string]any), fixed("in "+path))
	}

	envRaw, origin, envErrs := envLayer(env, exp.referenced)
	errs = append(errs, envErrs...)
	add(envRaw, envSource(origin))

	if len(overrides) > 0 {
		add(kmaps.Unflatten(maps.Clone(overrides), "."), fixed("from overrides"))
	}
	if len(errs) > 0 {
		return nil, report(errors.Join(errs...))
	}
	cfg, err := decode(layers)
	if err != nil {
		return nil, err
	}
	followDataDir(cfg, layers[1:])
	return cfg, nil
}

// followDataDir moves the sandbox directories under a changed data_dir when no layer
// above the defaults sets them, so --data-dir alone relocates all state.
func followDataDir(cfg *Config, userLayers []map[string]any) {
	if !setIn(userLayers, "silas", "data_dir") {
		return
	}
	if !setIn(userLayers, "silas", "sandbox", "verify_dir") {
		cfg.Sandbox.VerifyDir = cfg.DataPath("verify")
	}
	if !setIn(userLayers, "silas", "sandbox", "customer_context_dir") {
		cfg.Sandbox.CustomerContextDir = cfg.DataPath("customer_context")
	}
	if !setIn(userLayers, "silas", "gates", "script_dir") {
		cfg.Gates.ScriptDir = cfg.DataPath("gates")
	}
}

// setIn reports whether any layer holds a value at path.
func setIn(layers []map[string]any, path ...string) bool {
	for _, layer := range layers {
		var v any = layer
		found := true
		for _, seg := range path {
			m, ok := v.(map[string]any)
			if !ok {
				found = false
				break
			}
			if v, ok = m[seg]; !ok {
				found = false
				break
			}
		}
		if found {
			return true
		}
	}
	return false
}

// decode merges the checked layers with koanf (later layers win, maps merge key by
// key, lists are replaced) and decodes the result strictly.
func decode(layers []map[string]any) (*Config, error) {
	k := koanf.New(".")
	for _, layer := range layers {
		if err := k.Load(confmap.Provider(layer, ""), nil); err != nil {
			return nil, fmt.Errorf("merge config layers: %w", err)
		}
	}
	var doc document
	err := k.UnmarshalWithConf("", &doc, koanf.UnmarshalConf{
		DecoderConfig: &mapstructure.DecoderConfig{TagName: "koanf", ErrorUnused: true},
	})
	if err != nil {
		return nil, fmt.Errorf("decode config: %w", err)
	}
	return &doc.Silas, nil
}

// parseYAML parses a YAML document whose top level must be a mapping; an empty
// document is an empty mapping.
func parseYAML(data []byte) (map[string]any, error) {
	m, err := yaml.Parser().Unmarshal(data)
	if err != nil {
		return nil, err
	}
	if m == nil {
		m = map[string]any{}
	}
	return m, nil
}

// report puts one header line above the joined problems.
func report(joined error) error {
	n := 1
	if multi, ok := joined.(interface{ Unwrap() []error }); ok {
		n = len(multi.Unwrap())
	}
	noun := "problems"
	if n == 1 {
		noun = "problem"
	}
	return fmt.Errorf("configuration has %d %s:\n%w", n, noun, joined)
}
