package config

import (
	"errors"
	"reflect"
	"testing"
)

func TestModelChainShapes(t *testing.T) {
	const providers = `
silas:
  providers:
    lan: { base_url: "http://gpu-box.lan:8080/v1" }
`
	tests := []struct {
		name    string
		yaml    string
		environ []string
		ov      map[string]any
		want    ModelChain
	}{
		{name: "one string, as before", yaml: "  models: { proxy: \"lan:qwen2.5:7b\" }\n", want: ModelChain{"lan:qwen2.5:7b"}},
		{name: "a list", yaml: "  models:\n    proxy: [\"openrouter:anthropic/claude-haiku-4-5\", \"lan:qwen2.5:7b\"]\n",
			want: ModelChain{"openrouter:anthropic/claude-haiku-4-5", "lan:qwen2.5:7b"}},
		{name: "environment, comma separated", environ: []string{"SILAS_MODELS__PROXY=openrouter:a/b, lan:qwen2.5:7b"},
			want: ModelChain{"openrouter:a/b", "lan:qwen2.5:7b"}},
		{name: "override list", ov: map[string]any{"silas.models.proxy": []string{"lan:x", "openrouter:y"}}, want: ModelChain{"lan:x", "openrouter:y"}},
		{name: "override string", ov: map[string]any{"silas.models.proxy": "lan:x"}, want: ModelChain{"lan:x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := mustLoad(t, LoadOptions{Path: writeConfig(t, providers+tt.yaml), Environ: tt.environ, Overrides: tt.ov})
			if !reflect.DeepEqual(cfg.Models.Proxy, tt.want) {
				t.Errorf("models.proxy = %#v, want %#v", cfg.Models.Proxy, tt.want)
			}
			if cfg.Models.Proxy.Primary() != tt.want[0] {
				t.Errorf("Primary = %q", cfg.Models.Proxy.Primary())
			}
			if got := cfg.Models.Planner; !reflect.DeepEqual(got, ModelChain{"openrouter:anthropic/claude-sonnet-4-5"}) {
				t.Errorf("models.planner = %v; the other roles keep their defaults", got)
			}
		})
	}
}

func TestModelChainProblemsNameTheEntry(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []string
	}{
		{"bad second entry", `proxy: ["openrouter:a/b", "gpt-4o"]`, []string{"silas.models.proxy[1]", "no provider prefix"}},
		{"unknown provider in a chain", `planner: ["openrouter:a/b", "openrouter:c", "nowhere:x"]`,
			[]string{"silas.models.planner[2]", `provider "nowhere" is not configured`}},
		{"repeated entry", `scorer: ["openrouter:a", "openrouter:a"]`, []string{"silas.models.scorer[1]", "already in the list"}},
		{"empty list", `executor: []`, []string{"silas.models.executor", "must name a model"}},
		{"not a string", `proxy: [{model: x}]`, []string{"silas.models.proxy[0]", "want a string"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(LoadOptions{Path: writeConfig(t, "silas:\n  models:\n    "+tt.yaml+"\n"), Environ: noEnv()})
			wantErr(t, err, tt.want...)
		})
	}
}

func TestProviderPrices(t *testing.T) {
	cfg := mustLoad(t, LoadOptions{Path: writeConfig(t, `
silas:
  providers:
    openai:
      base_url: "https://api.openai.com/v1"
      api_key_env: OPENAI_API_KEY
      prices:
        "gpt-4.1-mini": { input_per_mtok: 0.4, output_per_mtok: 1.6 }
        "*": { input_per_mtok: 2, output_per_mtok: 8 }
    lan: { base_url: "http://10.0.0.5:8080/v1" }
  models:
    executor: ["openai:gpt-4.1-mini", "lan:qwen2.5-coder:32b"]
`)})
	// Model ids keep their dots and colons.
	want := map[string]ModelPrice{"gpt-4.1-mini": {InputPerMTok: 0.4, OutputPerMTok: 1.6}, "*": {InputPerMTok: 2, OutputPerMTok: 8}}
	if got := cfg.Providers["openai"].Prices; !reflect.DeepEqual(got, want) {
		t.Errorf("prices = %+v, want %+v", got, want)
	}
	if lan := cfg.Providers["lan"]; lan.APIKeyEnv != "" || lan.Prices != nil {
		t.Errorf("lan = %+v, want a keyless provider without prices", lan)
	}

	tests := []struct {
		name   string
		prices string
		want   []string
		kind   error
	}{
		{"negative", `{ "m-1.5": { input_per_mtok: -1, output_per_mtok: 1 } }`, []string{"silas.providers.p.prices.m-1.5.input_per_mtok", "0 or more"}, ErrInvalid},
		{"empty model id", `{ "": { input_per_mtok: 1 } }`, []string{"silas.providers.p.prices", "empty model id"}, ErrInvalid},
		{"not a number", `{ m: { output_per_mtok: "cheap" } }`, []string{"silas.providers.p.prices.m.output_per_mtok", "want a number"}, ErrInvalid},
		{"misspelt key", `{ m: { input_per_token: 1 } }`, []string{"silas.providers.p.prices.m.input_per_token", "input_per_mtok"}, ErrUnknownKey},
		{"a list", `[{ model: m }]`, []string{"silas.providers.p.prices", "want a mapping"}, ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(LoadOptions{Environ: noEnv(), Path: writeConfig(t,
				"silas:\n  providers:\n    p:\n      base_url: \"http://127.0.0.1:1/v1\"\n      prices: "+tt.prices+"\n")})
			wantErr(t, err, tt.want...)
			if !errors.Is(err, tt.kind) {
				t.Errorf("err = %v, want %v", err, tt.kind)
			}
		})
	}
}
