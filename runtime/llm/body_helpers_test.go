package llm

import "io"

// encodeRequest is encodeBody as one byte slice, for tests that read the
// body the server would receive.
func encodeRequest(req *Request) ([]byte, error) {
	b, err := encodeBody(req)
	if err != nil {
		return nil, err
	}
	return io.ReadAll(b.reader())
}
