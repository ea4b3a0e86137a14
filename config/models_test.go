package config

import (
	"errors"
	"testing"
)

func TestParseModelRef(t *testing.T) {
	cases := []struct {
		in, provider, model string
		ok                  bool
	}{
		{"openrouter:anthropic/claude-haiku-4-5", "openrouter", "anthropic/claude-haiku-4-5", true},
		{"openrouter:meta-llama/llama-3.1-8b:free", "openrouter", "meta-llama/llama-3.1-8b:free", true},
		{"local:qwen2.5:7b", "local", "qwen2.5:7b", true},
		{"ollama:llama3", "ollama", "llama3", true},
		{"anthropic/claude-haiku-4-5", "", "", false},
		{":model", "", "", false},
		{"openrouter:", "", "", false},
		{"openrouter:   ", "", "", false},
		{"", "", "", false},
		{"open router:m", "", "", false},
		{"a/b:c", "", "", false},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			p, m, err := ParseModelRef(c.in)
			if (err == nil) != c.ok {
				t.Fatalf("ParseModelRef(%q) err = %v, want ok=%v", c.in, err, c.ok)
			}
			if err != nil && !errors.Is(err, ErrBadModelRef) {
				t.Errorf("err %v does not wrap ErrBadModelRef", err)
			}
			if p != c.provider || m != c.model {
				t.Errorf("ParseModelRef(%q) = %q, %q, want %q, %q", c.in, p, m, c.provider, c.model)
			}
		})
	}
}

func TestResolveModel(t *testing.T) {
	cfg := mustLoad(t, LoadOptions{})
	cases := []struct {
		ref, wantModel, wantURL string
		ok                      bool
	}{
		{cfg.Models.Planner.Primary(), "anthropic/claude-sonnet-4-5", "https://openrouter.ai/api/v1", true},
		{"missing:x", "", "", false},
		{"no-colon", "", "", false},
	}
	for _, c := range cases {
		p, m, err := cfg.ResolveModel(c.ref)
		if (err == nil) != c.ok || m != c.wantModel || p.BaseURL != c.wantURL {
			t.Errorf("ResolveModel(%q) = %+v, %q, %v", c.ref, p, m, err)
		}
	}
}
