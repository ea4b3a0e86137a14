package web

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/silas-ai/silas/messages"
)

// field identifies a known Frame field; its value is its bit in the
// duplicate-detection mask.
type field int

const (
	fieldUnknown field = iota - 1
	fieldType
	fieldToken
	fieldSessionToken
	fieldText
	fieldMessageID
	fieldSenderID
	fieldRequestID
	fieldVerdict
	fieldSelectedItemIDs
	fieldEditedText
	fieldSelectedValue
	fieldFreetext
	fieldRefID
	fieldSuccess
	fieldStepType
	fieldAction
	fieldSelectedAction
	fieldSignature
	fieldNonce
	fieldTimestamp
	fieldReplyTo
	fieldReceipts
	fieldConfirmation
)

// fieldOf maps an exact JSON key to its field.
func fieldOf(key string) field {
	switch key {
	case "type":
		return fieldType
	case "token":
		return fieldToken
	case "session_token":
		return fieldSessionToken
	case "text":
		return fieldText
	case "message_id":
		return fieldMessageID
	case "sender_id":
		return fieldSenderID
	case "request_id":
		return fieldRequestID
	case "verdict":
		return fieldVerdict
	case "selected_item_ids":
		return fieldSelectedItemIDs
	case "edited_text":
		return fieldEditedText
	case "selected_value":
		return fieldSelectedValue
	case "freetext":
		return fieldFreetext
	case "ref_id":
		return fieldRefID
	case "success":
		return fieldSuccess
	case "step_type":
		return fieldStepType
	case "action":
		return fieldAction
	case "selected_action":
		return fieldSelectedAction
	case "signature":
		return fieldSignature
	case "nonce":
		return fieldNonce
	case "timestamp":
		return fieldTimestamp
	case "reply_to":
		return fieldReplyTo
	case "receipts":
		return fieldReceipts
	case "confirmation":
		return fieldConfirmation
	}
	return fieldUnknown
}

// stringField returns f's string for a string-typed field, or nil.
func stringField(f *messages.Frame, k field) *string {
	switch k {
	case fieldType:
		return &f.Type
	case fieldToken:
		return &f.Token
	case fieldSessionToken:
		return &f.SessionToken
	case fieldText:
		return &f.Text
	case fieldMessageID:
		return &f.MessageID
	case fieldSenderID:
		return &f.SenderID
	case fieldRequestID:
		return &f.RequestID
	case fieldVerdict:
		return &f.Verdict
	case fieldEditedText:
		return &f.EditedText
	case fieldSelectedValue:
		return &f.SelectedValue
	case fieldFreetext:
		return &f.Freetext
	case fieldRefID:
		return &f.RefID
	case fieldStepType:
		return &f.StepType
	case fieldAction:
		return &f.Action
	case fieldSelectedAction:
		return &f.SelectedAction
	case fieldSignature:
		return &f.Signature
	case fieldNonce:
		return &f.Nonce
	case fieldTimestamp:
		return &f.Timestamp
	case fieldReplyTo:
		return &f.ReplyTo
	}
	return nil
}

// decoder is a strict, single-pass JSON reader for client frames. Strings
// without escapes are substrings of s, so they cost no allocation.
type decoder struct {
	s string
	i int
}

// frame reads one object into f and requires the input to end after it.
func (d *decoder) frame(f *messages.Frame) error {
	d.ws()
	if !d.consume('{') {
		return d.syntax("expected an object")
	}
	d.ws()
	if d.consume('}') {
		return d.end()
	}
	var seen uint32
	for {
		d.ws()
		if d.peek() != '"' {
			return d.syntax("expected a field name")
		}
		key, err := d.str()
		if err != nil {
			return err
		}
		d.ws()
		if !d.consume(':') {
			return d.syntax("expected ':'")
		}
		d.ws()
		if err := d.field(f, key, &seen); err != nil {
			return err
		}
		d.ws()
		if d.consume(',') {
			continue
		}
		if d.consume('}') {
			return d.end()
		}
		return d.syntax("expected ',' or '}'")
	}
}

// field reads the value of key into f.
// boolean reads a JSON boolean (or null, which leaves v false) into v.
func (d *decoder) boolean(v *bool, key string) error {
	switch {
	case d.literal("true"):
		*v = true
	case d.literal("false"):
		*v = false
	case d.literal("null"):
	default:
		return d.fieldType(key, "a boolean")
	}
	return nil
}

func (d *decoder) field(f *messages.Frame, key string, seen *uint32) error {
	k := fieldOf(key)
	if k == fieldUnknown {
		return d.skip(0)
	}
	if *seen&(1<<k) != 0 {
		return &FieldError{Field: key, Problem: "appears twice; send it once", kind: ErrFieldType}
	}
	*seen |= 1 << k
	switch k {
	case fieldSuccess:
		return d.boolean(&f.Success, key)
	case fieldReceipts:
		return d.boolean(&f.Receipts, key)
	case fieldSelectedItemIDs:
		return d.stringList(&f.SelectedItemIDs, key)
	case fieldConfirmation:
		return d.object(&f.Confirmation, key)
	}
	switch d.peek() {
	case '"':
		v, err := d.str()
		if err != nil {
			return err
		}
		*stringField(f, k) = v
		return nil
	case 'n':
		if d.literal("null") {
			return nil
		}
		return d.syntax("invalid literal")
	}
	return d.fieldType(key, "a string")
}

// object reads null (leaving dst nil) or a JSON object, kept as its raw
// bytes for the Conn to decode.
func (d *decoder) object(dst *json.RawMessage, key string) error {
	if d.literal("null") {
		*dst = nil
		return nil
	}
	if d.peek() != '{' {
		return d.fieldType(key, "an object")
	}
	start := d.i
	if err := d.skip(0); err != nil {
		return err
	}
	*dst = json.RawMessage(d.s[start:d.i])
	return nil
}

// stringList reads null or an array of strings (null elements become "").
func (d *decoder) stringList(dst *[]string, key string) error {
	if d.literal("null") {
		*dst = nil
		return nil
	}
	if !d.consume('[') {
		return d.fieldType(key, "an array of strings")
	}
	list := []string{}
	d.ws()
	if d.consume(']') {
		*dst = list
		return nil
	}
	for {
		d.ws()
		switch {
		case d.peek() == '"':
			v, err := d.str()
			if err != nil {
				return err
			}
			list = append(list, v)
		case d.literal("null"):
			list = append(list, "")
		default:
			return d.fieldType(key, "an array of strings")
		}
		d.ws()
		if d.consume(',') {
			continue
		}
		if d.consume(']') {
			*dst = list
			return nil
		}
		return d.syntax("expected ',' or ']'")
	}
}

// skip validates and steps over any JSON value.
func (d *decoder) skip(depth int) error {
	switch c := d.peek(); {
	case c == '"':
		_, err := d.str()
		return err
	case c == '{' || c == '[':
		if depth >= maxDepth {
			return d.syntax("nesting too deep")
		}
		return d.skipContainer(depth)
	case c == '-' || (c >= '0' && c <= '9'):
		return d.number()
	case d.literal("true"), d.literal("false"), d.literal("null"):
		return nil
	}
	return d.syntax("expected a value")
}

// skipContainer steps over an object or array starting at d.i.
func (d *decoder) skipContainer(depth int) error {
	object := d.s[d.i] == '{'
	closer := byte(']')
	if object {
		closer = '}'
	}
	d.i++
	d.ws()
	if d.consume(closer) {
		return nil
	}
	for {
		d.ws()
		if object {
			if d.peek() != '"' {
				return d.syntax("expected a field name")
			}
			if _, err := d.str(); err != nil {
				return err
			}
			d.ws()
			if !d.consume(':') {
				return d.syntax("expected ':'")
			}
			d.ws()
		}
		if err := d.skip(depth + 1); err != nil {
			return err
		}
		d.ws()
		if d.consume(',') {
			continue
		}
		if d.consume(closer) {
			return nil
		}
		return d.syntax("expected ',' or a closing bracket")
	}
}

// number steps over a number in strict JSON grammar.
func (d *decoder) number() error {
	s, i := d.s, d.i
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		i = digits(s, i)
	default:
		return d.syntax("invalid number")
	}
	if i < len(s) && s[i] == '.' {
		j := digits(s, i+1)
		if j == i+1 {
			return d.syntax("invalid number")
		}
		i = j
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := digits(s, i)
		if j == i {
			return d.syntax("invalid number")
		}
		i = j
	}
	d.i = i
	return nil
}

func digits(s string, i int) int {
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

// str reads a string starting at the opening quote at d.i.
func (d *decoder) str() (string, error) {
	s := d.s
	start := d.i + 1
	for i := start; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			d.i = i + 1
			return s[start:i], nil
		case c == '\\':
			return d.strEscaped(start, i)
		case c < 0x20:
			d.i = i
			return "", d.syntax("control character in string")
		}
	}
	d.i = len(s)
	return "", d.syntax("unterminated string")
}

// strEscaped finishes a string that has an escape at i, the way
// encoding/json does: invalid surrogates become U+FFFD.
func (d *decoder) strEscaped(start, i int) (string, error) {
	s := d.s
	var b strings.Builder
	b.Grow(i - start + 16)
	b.WriteString(s[start:i])
	for i < len(s) {
		c := s[i]
		switch {
		case c == '"':
			d.i = i + 1
			return b.String(), nil
		case c < 0x20:
			d.i = i
			return "", d.syntax("control character in string")
		case c != '\\':
			b.WriteByte(c)
			i++
			continue
		}
		if i+1 >= len(s) {
			break
		}
		switch s[i+1] {
		case '"', '\\', '/':
			b.WriteByte(s[i+1])
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r, ok := hex4(s, i+2)
			if !ok {
				d.i = i
				return "", d.syntax("invalid \\u escape")
			}
			i += 6
			if utf16.IsSurrogate(r) {
				if i+1 < len(s) && s[i] == '\\' && s[i+1] == 'u' {
					if r2, ok := hex4(s, i+2); ok {
						if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
							b.WriteRune(dec)
							i += 6
							continue
						}
					}
				}
				r = utf8.RuneError
			}
			b.WriteRune(r)
			continue
		default:
			d.i = i
			return "", d.syntax("invalid escape")
		}
		i += 2
	}
	d.i = len(s)
	return "", d.syntax("unterminated string")
}

// hex4 decodes the four hex digits at s[i:i+4].
func hex4(s string, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var r rune
	for _, c := range []byte(s[i : i+4]) {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// literal consumes word if the input continues with it.
func (d *decoder) literal(word string) bool {
	if strings.HasPrefix(d.s[d.i:], word) {
		d.i += len(word)
		return true
	}
	return false
}

func (d *decoder) ws() {
	for d.i < len(d.s) {
		switch d.s[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *decoder) peek() byte {
	if d.i < len(d.s) {
		return d.s[d.i]
	}
	return 0
}

func (d *decoder) consume(c byte) bool {
	if d.i < len(d.s) && d.s[d.i] == c {
		d.i++
		return true
	}
	return false
}

// end requires that only whitespace follows.
func (d *decoder) end() error {
	d.ws()
	if d.i != len(d.s) {
		return d.syntax("unexpected data after the object")
	}
	return nil
}

func (d *decoder) syntax(msg string) error {
	return fmt.Errorf("%w: %s at offset %d", ErrInvalidJSON, msg, d.i)
}

func (d *decoder) fieldType(key, want string) error {
	return &FieldError{Field: key, Problem: "must be " + want, kind: ErrFieldType}
}
