package pipeline

import "github.com/silas-ai/silas/runtime/llm"

// PromptText is the call's prompt as text, decoded from PromptQuoted when
// the window gave only its encoding.
func (c *ModelCall) PromptText() string {
	m := llm.Message{Content: c.Prompt, Quoted: c.PromptQuoted}
	return m.Text()
}
