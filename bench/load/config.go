package load

import (
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// ModelKeyEnv is the environment variable that carries the (fake) model API
// key to the silas child; the generated config names it in api_key_env. It
// must not start with SILAS_, which silas reads as config keys.
const ModelKeyEnv = "BENCH_MODEL_KEY"

// MockModel is the model name the generated config gives every role.
const MockModel = "openrouter:mock/model"

// Limit is one setting the bench raises above its default.
type Limit struct {
	// Key is the config key, e.g. "silas.limits.ws_messages_per_minute_per_ip".
	Key string `json:"key"`
	// Value is what the bench sets.
	Value int `json:"value"`
	// Default is the built-in default (config/defaults.yaml).
	Default int `json:"default"`
	// Why says what would happen at the default.
	Why string `json:"why"`
}

// RaisedLimits are the limits the bench raises. They are sizing knobs an
// operator turns for a busy deployment, not shortcuts: every turn still
// journals, commits and audits.
var RaisedLimits = []Limit{
	{"silas.limits.ws_messages_per_minute_per_scope", 1_000_000, 60,
		"a bench customer sends a message as soon as the last is answered (~20 a second with a 50 ms model), far beyond a person's pace"},
	{"silas.limits.llm_calls_per_minute_per_scope", 1_000_000, 30,
		"one model call per turn at ~20 turns a second per customer"},
	{"silas.limits.ws_messages_per_minute_per_ip", 100_000_000, 240,
		"every simulated customer connects from 127.0.0.1, so they all share one per-IP bucket"},
	{"silas.backpressure.max_pending_turns_total", 100_000, 500,
		"1,000 customers each with a turn in flight are 1,000 pending turns; a deployment sized for them raises this bound"},
	{"silas.backpressure.max_pending_turns_per_ip", 100_000, 100,
		"every simulated customer connects from 127.0.0.1, so all their pending turns are charged to one address"},
	{"silas.channels.web.max_sockets", 100_000, 10_000,
		"the idle scenario holds 10,000 customer sockets open besides the probe"},
	{"silas.channels.web.max_sockets_per_ip", 100_000, 100,
		"every simulated customer connects from 127.0.0.1, so they all count against one address"},
	{"silas.channels.web.idle_timeout_seconds", 86_400, 120,
		"idle customers send nothing by design; at the default they would be closed while RSS is measured"},
}

// ServerConfig is the silas config a scenario runs with.
type ServerConfig struct {
	// DataDir is the data directory (temporary, one per scenario).
	DataDir string
	// MockURL is the mock model's base URL, e.g. "http://127.0.0.1:4011/v1".
	MockURL string
}

// Values returns the config as flat keys ("silas.a.b") and values.
func (c ServerConfig) Values() map[string]any {
	v := map[string]any{
		"silas.data_dir":                         c.DataDir,
		"silas.skills_dir":                       filepath.Join(c.DataDir, "skills"),
		"silas.sandbox.verify_dir":               filepath.Join(c.DataDir, "verify"),
		"silas.sandbox.customer_context_dir":     filepath.Join(c.DataDir, "customer_context"),
		"silas.channels.web.host":                "127.0.0.1",
		"silas.channels.web.port":                0,
		"silas.chatbot.enabled":                  true,
		"silas.providers.openrouter.base_url":    c.MockURL,
		"silas.providers.openrouter.api_key_env": ModelKeyEnv,
		"silas.models.proxy":                     MockModel,
		"silas.models.planner":                   MockModel,
		"silas.models.executor":                  MockModel,
		"silas.models.scorer":                    MockModel,
		"silas.log.level":                        "warn",
		"silas.log.format":                       "json",
	}
	for _, l := range RaisedLimits {
		v[l.Key] = l.Value
	}
	return v
}

// YAML renders the config as a YAML document.
func (c ServerConfig) YAML() (string, error) {
	return renderYAML(c.Values())
}

// renderYAML nests flat dotted keys and renders them with sorted keys, so the
// same values always give the same text. Values may be strings, ints, floats
// and bools.
func renderYAML(flat map[string]any) (string, error) {
	root := map[string]any{}
	for k, v := range flat {
		parts := strings.Split(k, ".")
		m := root
		for _, p := range parts[:len(parts)-1] {
			next, ok := m[p].(map[string]any)
			if !ok {
				if _, taken := m[p]; taken {
					return "", fmt.Errorf("config key %s: %s is both a value and a section", k, p)
				}
				next = map[string]any{}
				m[p] = next
			}
			m = next
		}
		leaf := parts[len(parts)-1]
		if _, taken := m[leaf]; taken {
			return "", fmt.Errorf("config key %s: %s is both a value and a section", k, leaf)
		}
		m[leaf] = v
	}
	var b strings.Builder
	if err := writeYAML(&b, root, 0); err != nil {
		return "", err
	}
	return b.String(), nil
}

func writeYAML(b *strings.Builder, m map[string]any, depth int) error {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	indent := strings.Repeat("  ", depth)
	for _, k := range keys {
		switch v := m[k].(type) {
		case map[string]any:
			b.WriteString(indent + k + ":\n")
			if err := writeYAML(b, v, depth+1); err != nil {
				return err
			}
		case string:
			b.WriteString(indent + k + ": " + strconv.Quote(v) + "\n")
		case int:
			b.WriteString(indent + k + ": " + strconv.Itoa(v) + "\n")
		case float64:
			b.WriteString(indent + k + ": " + strconv.FormatFloat(v, 'g', -1, 64) + "\n")
		case bool:
			b.WriteString(indent + k + ": " + strconv.FormatBool(v) + "\n")
		default:
			return fmt.Errorf("config key %s: cannot render %T as YAML", k, v)
		}
	}
	return nil
}
