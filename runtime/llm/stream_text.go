package llm

import (
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// TextExtractor pulls one string field out of a JSON document that arrives
// in pieces, such as a structured answer being streamed: the "message" of
// an AgentResponse, or the "response"."message" of a RouteDecision. It
// returns the field's decoded text as soon as each piece of it is read,
// so that a user can read an answer while the model still writes it.
//
// It is a tokenizer, not a validator: it follows objects, arrays, strings
// and their escapes, and only the first string found at the path counts
// (a "message" inside an array or a deeper object never does). Each piece
// it returns is valid UTF-8: a character split between pieces of input is
// held back until it is complete. Whether the document as a whole is valid
// is for the decoder of the finished answer to say.
//
// A TextExtractor is not safe for concurrent use.
type TextExtractor struct {
	path []string

	stack []xFrame
	state xState
	// inKey is set while the string being read is an object key; key
	// collects it (at most maxKey bytes: a longer key matches no path).
	inKey bool
	key   []byte
	// target is set while the string being read is the field, done once
	// it has been read.
	target, done bool
	// hex collects the digits of a \u escape; high is a high surrogate
	// waiting for its low half.
	hex  []byte
	high rune
	// out collects what one Write returns; tail holds the bytes of a
	// character not yet complete.
	out  []byte
	tail []byte
}

type xFrame struct {
	object    bool
	expectKey bool
	key       string
	keyLong   bool
}

type xState uint8

const (
	xNormal xState = iota
	xString
	xEscape
	xUnicode
)

// maxKey caps the key bytes kept; the paths of interest are short.
const maxKey = 64

// NewTextExtractor returns an extractor of the string at path, a list of
// object keys from the top-level object down.
func NewTextExtractor(path ...string) *TextExtractor {
	return &TextExtractor{path: path}
}

// Reset forgets everything read, for a new document (a new answer).
func (x *TextExtractor) Reset() {
	*x = TextExtractor{path: x.path, stack: x.stack[:0], key: x.key[:0], hex: x.hex[:0], out: x.out[:0], tail: x.tail[:0]}
}

// Write reads the next piece of the document and returns the field's text
// found in it, "" when there is none.
func (x *TextExtractor) Write(p string) string {
	x.out = x.out[:0]
	if x.done {
		return ""
	}
	for i := 0; i < len(p) && !x.done; i++ {
		x.step(p[i])
	}
	return x.flush()
}

// step reads one byte.
func (x *TextExtractor) step(b byte) {
	switch x.state {
	case xNormal:
		x.structural(b)
	case xString:
		switch b {
		case '\\':
			x.state = xEscape
		case '"':
			x.endString()
		default:
			x.lone()
			x.char(b)
		}
	case xEscape:
		x.state = xString
		if b == 'u' {
			x.state, x.hex = xUnicode, x.hex[:0]
			return
		}
		x.lone()
		if c, ok := unescape(b); ok {
			x.char(c)
		}
	case xUnicode:
		x.hex = append(x.hex, b)
		if len(x.hex) < 4 {
			return
		}
		x.state = xString
		v, err := strconv.ParseUint(string(x.hex), 16, 16)
		if err != nil {
			x.lone()
			x.rune(utf8.RuneError)
			return
		}
		x.codeUnit(rune(v))
	}
}

// structural reads a byte outside any string. Numbers and literals need no
// state: they end at a byte this reads anyway.
func (x *TextExtractor) structural(b byte) {
	top := x.top()
	switch b {
	case '{':
		x.stack = append(x.stack, xFrame{object: true, expectKey: true})
	case '[':
		x.stack = append(x.stack, xFrame{})
	case '}', ']':
		if len(x.stack) > 0 {
			x.stack = x.stack[:len(x.stack)-1]
		}
	case ':':
		if top != nil {
			top.expectKey = false
		}
	case ',':
		if top != nil && top.object {
			top.expectKey = true
		}
	case '"':
		x.state = xString
		x.inKey = top != nil && top.object && top.expectKey
		if x.inKey {
			x.key = x.key[:0]
			top.keyLong = false
			return
		}
		x.target = x.atPath()
	}
}

func (x *TextExtractor) top() *xFrame {
	if len(x.stack) == 0 {
		return nil
	}
	return &x.stack[len(x.stack)-1]
}

// atPath reports whether a value that starts now is the field.
func (x *TextExtractor) atPath() bool {
	if len(x.stack) != len(x.path) || len(x.path) == 0 {
		return false
	}
	for i, k := range x.path {
		f := &x.stack[i]
		if !f.object || f.keyLong || f.key != k {
			return false
		}
	}
	return true
}

func (x *TextExtractor) endString() {
	x.lone()
	x.state = xNormal
	switch {
	case x.inKey:
		x.top().key = string(x.key)
		x.inKey = false
	case x.target:
		x.target, x.done = false, true
	}
}

// char adds a decoded byte of the current string.
func (x *TextExtractor) char(b byte) {
	switch {
	case x.inKey:
		if len(x.key) >= maxKey {
			x.top().keyLong = true
			return
		}
		x.key = append(x.key, b)
	case x.target:
		x.out = append(x.out, b)
	}
}

// rune adds a decoded character of the current string.
func (x *TextExtractor) rune(r rune) {
	var buf [utf8.UTFMax]byte
	for _, b := range buf[:utf8.EncodeRune(buf[:], r)] {
		x.char(b)
	}
}

// codeUnit adds the UTF-16 code unit of a \u escape, pairing surrogates.
func (x *TextExtractor) codeUnit(r rune) {
	if x.high != 0 {
		high := x.high
		x.high = 0
		if utf16.IsSurrogate(r) && r >= 0xDC00 {
			x.rune(utf16.DecodeRune(high, r))
			return
		}
		x.rune(utf8.RuneError)
	}
	switch {
	case r >= 0xD800 && r < 0xDC00:
		x.high = r
	case utf16.IsSurrogate(r):
		x.rune(utf8.RuneError)
	default:
		x.rune(r)
	}
}

// lone writes a high surrogate that no low one followed.
func (x *TextExtractor) lone() {
	if x.high != 0 {
		x.high = 0
		x.rune(utf8.RuneError)
	}
}

// flush returns the text collected by this Write, holding back an
// incomplete character at its end for the next.
func (x *TextExtractor) flush() string {
	if len(x.out) == 0 {
		return ""
	}
	buf := append(x.tail, x.out...)
	cut := len(buf)
	// Look back at most 3 bytes for the start of a character that is not
	// complete yet.
	for i := len(buf) - 1; i >= 0 && i >= len(buf)-utf8.UTFMax; i-- {
		if !utf8.RuneStart(buf[i]) {
			continue
		}
		if !utf8.FullRune(buf[i:]) {
			cut = i
		}
		break
	}
	s := string(buf[:cut])
	x.tail = append(x.tail[:0], buf[cut:]...)
	return s
}

// unescape decodes the one-character JSON escapes.
func unescape(b byte) (byte, bool) {
	switch b {
	case '"', '\\', '/':
		return b, true
	case 'b':
		return '\b', true
	case 'f':
		return '\f', true
	case 'n':
		return '\n', true
	case 'r':
		return '\r', true
	case 't':
		return '\t', true
	}
	return 0, false
}
