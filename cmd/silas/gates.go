package main

import (
	"fmt"
	"path/filepath"

	"github.com/silas-ai/silas/config"
	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/gates"
	"github.com/silas-ai/silas/runtime/gates/guardrails"
	"github.com/silas-ai/silas/runtime/gates/llmgate"
	"github.com/silas-ai/silas/runtime/gates/predicate"
	"github.com/silas-ai/silas/runtime/gates/script"
	"github.com/silas-ai/silas/runtime/llm"
	"github.com/silas-ai/silas/sandbox"
)

// newGates builds the gate runner with its four providers, and the system
// gates of the configuration. Script gates run the owner's scripts from
// silas.gates.script_dir (shown to them read-only) in scripts, a sandbox
// whose work dirs lie outside it.
func newGates(cfg *config.Config, providers map[string]llm.Provider, scripts sandbox.Manager) (*gates.Runner, []messages.Gate, error) {
	dir, err := filepath.Abs(cfg.Sandbox.VerifyDir)
	if err != nil {
		return nil, nil, fmt.Errorf("gates: %w", err)
	}
	pred, err := predicate.New(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("gates: %w", err)
	}
	scriptDir, err := filepath.Abs(cfg.Gates.ScriptDir)
	if err != nil {
		return nil, nil, fmt.Errorf("gates.script_dir: %w", err)
	}
	scr, err := script.New(script.Options{Dir: scriptDir, Sandbox: scripts})
	if err != nil {
		return nil, nil, fmt.Errorf("gates: %w", err)
	}
	settings, err := llmgate.SettingsFromConfig(cfg.Gates.LLMDefaults)
	if err != nil {
		return nil, nil, err
	}
	p, ok := providers[settings.Provider]
	if !ok {
		return nil, nil, fmt.Errorf("gates.llm_defaults.model: no provider %q in silas.providers", settings.Provider)
	}
	llmGate, err := llmgate.New(p.Complete, settings)
	if err != nil {
		return nil, nil, err
	}
	reg, err := gates.NewRegistry(map[messages.GateProvider]gates.Provider{
		messages.ProviderGuardrailsAI: guardrails.New(),
		messages.ProviderPredicate:    pred,
		messages.ProviderScript:       scr,
		messages.ProviderLLM:          llmGate,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("gates: %w", err)
	}
	system, err := gates.SystemGates(cfg.Gates)
	if err != nil {
		return nil, nil, fmt.Errorf("gates.system: %w", err)
	}
	return gates.NewRunner(reg), system, nil
}
