package llm

import (
	"bytes"
	"io"
)

// requestBody is an encoded request: raw, or, when it splices in prompts
// that arrived encoded, the pieces to send one after the other. Pieces are
// never written to: a body may be sent again (a retry), and the prompt
// pieces belong to the caller's context window.
type requestBody struct {
	raw  []byte
	segs []string
	size int
}

func (b *requestBody) add(s string) {
	if s != "" {
		b.segs = append(b.segs, s)
		b.size += len(s)
	}
}

// reader returns a fresh reader of the whole body.
func (b *requestBody) reader() io.Reader {
	if b.segs == nil {
		return bytes.NewReader(b.raw)
	}
	return &segReader{segs: b.segs}
}

// segReader reads pieces in order, copying each straight into the
// caller's buffer (net/http's connection buffer).
type segReader struct {
	segs []string
	off  int
}

func (r *segReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) && len(r.segs) > 0 {
		c := copy(p[n:], r.segs[0][r.off:])
		n += c
		r.off += c
		if r.off == len(r.segs[0]) {
			r.segs, r.off = r.segs[1:], 0
		}
	}
	if n == 0 && len(r.segs) == 0 {
		return 0, io.EOF
	}
	return n, nil
}

// WriteTo writes the remaining pieces to w without an intermediate buffer.
func (r *segReader) WriteTo(w io.Writer) (int64, error) {
	var total int64
	for len(r.segs) > 0 {
		n, err := io.WriteString(w, r.segs[0][r.off:])
		total += int64(n)
		r.off += n
		if err != nil {
			return total, err
		}
		r.segs, r.off = r.segs[1:], 0
	}
	return total, nil
}
