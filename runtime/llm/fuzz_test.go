package llm

import "testing"

// FuzzDecodeResponse: whatever a provider answers, decoding returns a
// response or an error, never panics, and a response has content or tool
// calls it can hand on.
func FuzzDecodeResponse(f *testing.F) {
	f.Add([]byte(`{"choices":[{"message":{"content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1}}`))
	f.Add([]byte(`{"choices":[{"message":{"tool_calls":[{"id":"c","type":"function","function":{"name":"x","arguments":"{}"}}]}}]}`))
	f.Add([]byte(`{"error":{"message":"bad key","code":401}}`))
	f.Add([]byte(`{"choices":[]}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, body []byte) {
		res, err := decodeResponse(body)
		if err == nil && res == nil {
			t.Fatal("no response and no error")
		}
	})
}
