// Package llmgate is the "llm" gate provider of spec 5.5.3: a quality-tier
// model judges what deterministic checks cannot ("does this response answer
// the question?").
//
// By default an llm gate is in the quality lane: it returns continue with a
// score in [0, 1], advisory flags and a reason, and fails open — a timeout
// or unparseable answer gives continue, no score, flags ["llm_error"]. With
// promote_to_policy the gate is a policy gate: the model answers with an
// action (continue, block, require_approval), and any failure is an error,
// which the runner turns into a block (fail closed).
//
// The model is asked for structured output through [llm.RunStructured]
// (one repair retry) with one of two strict JSON Schemas, named
// "GateQualityOutput" ({score, flags, reason}) and "GatePolicyOutput"
// ({action, reason, score}). Calls use gates.llm_defaults: the model,
// temperature (0 by default), max_tokens and a per-call timeout.
//
// Gate fields used: check is the question or policy the model applies
// (config "policy" overrides it); the value judged is the trigger's text
// (see gates.Extract). Config "instructions" adds guidance, and config
// "timeout_seconds" (fractions allowed) replaces the default timeout for
// the gate.
package llmgate
