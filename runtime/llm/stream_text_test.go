package llm_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/silas-ai/silas/runtime/llm"
)

// extractCases are documents and the field text an extractor must find,
// each checked against encoding/json's reading of the same document.
var extractCases = []struct {
	name string
	path []string
	doc  string
}{
	{"agent response", []string{"message"}, `{"message":"Hello, world.","memory_queries":[],"memory_ops":[],"plan_action":null,"needs_approval":false}`},
	{"route decision", []string{"response", "message"}, `{"route":"direct","reason":"simple","response":{"message":"It is sunny.","memory_queries":[],"memory_ops":[],"plan_action":null,"needs_approval":false},"interaction_register":"status","interaction_mode":"default_and_offer","continuation_of":null,"context_profile":"conversation"}`},
	{"escapes", []string{"message"}, `{"message":"a \"quoted\" \\ back\/slash\nnew\tline \b\f\r end"}`},
	{"unicode escapes", []string{"message"}, `{"message":"caf\u00e9 \u20ac \ud83d\ude00 \u0041"}`},
	{"raw multibyte", []string{"message"}, `{"message":"café € 😀 日本語"}`},
	{"lone surrogates", []string{"message"}, `{"message":"x\ud83dy \ude00z \ud83d\u0041 \ud83d"}`},
	{"decoys before", []string{"response", "message"}, `{"reason":"{\"message\":\"no\"}","message":"top level, not it","list":[{"message":"in an array"}],"deep":{"response":{"message":"too deep"}},"response":{"memory_ops":[{"message":"nested op"}],"message":"the one"}}`},
	{"whitespace", []string{"message"}, "{\n  \"memory_queries\" : [ 1, 2.5e3, true, null ] ,\n  \"message\" :\t\"spaced out\"\n}"},
	{"field after long key", []string{"message"}, `{"` + strings.Repeat("k", 100) + `":"skip","message":"after"}`},
	{"escaped key", []string{"message"}, `{"mess\u0061ge":"escaped key matches"}`},
	{"planner route", []string{"response", "message"}, `{"route":"planner","reason":"needs a plan","response":null,"context_profile":"planning"}`},
	{"empty", []string{"message"}, `{"message":""}`},
	{"second occurrence ignored", []string{"message"}, `{"message":"first","message":"second"}`},
}

// wantText is encoding/json's value of the field, "" when there is none;
// for a duplicated key the extractor keeps the first, as the stream shows it.
func wantText(t *testing.T, doc string, path []string) string {
	t.Helper()
	if strings.Contains(doc, `"message":"first","message":"second"`) {
		return "first"
	}
	var v any
	if err := json.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatalf("test document is not JSON: %v", err)
	}
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		v = m[k]
	}
	s, _ := v.(string)
	return s
}

// extract feeds doc to a fresh extractor in pieces cut at cuts.
func extract(t *testing.T, x *llm.TextExtractor, doc string, cuts ...int) string {
	t.Helper()
	var b strings.Builder
	from := 0
	for _, c := range append(cuts, len(doc)) {
		out := x.Write(doc[from:c])
		if !utf8.ValidString(out) {
			t.Fatalf("piece %q is not valid UTF-8 (cuts %v)", out, cuts)
		}
		b.WriteString(out)
		from = c
	}
	return b.String()
}

func TestTextExtractorAtEverySplit(t *testing.T) {
	for _, tt := range extractCases {
		t.Run(tt.name, func(t *testing.T) {
			want := wantText(t, tt.doc, tt.path)
			x := llm.NewTextExtractor(tt.path...)
			if got := extract(t, x, tt.doc); got != want {
				t.Fatalf("whole document: got %q, want %q", got, want)
			}
			for i := 0; i <= len(tt.doc); i++ {
				x.Reset()
				if got := extract(t, x, tt.doc, i); got != want {
					t.Fatalf("split at %d (%q | %q): got %q, want %q", i, tt.doc[:i], tt.doc[i:], got, want)
				}
			}
			if len(tt.doc) <= 160 {
				for i := 0; i <= len(tt.doc); i++ {
					for j := i; j <= len(tt.doc); j++ {
						x.Reset()
						if got := extract(t, x, tt.doc, i, j); got != want {
							t.Fatalf("split at %d and %d: got %q, want %q", i, j, got, want)
						}
					}
				}
			}
			x.Reset()
			cuts := make([]int, 0, len(tt.doc))
			for i := 1; i < len(tt.doc); i++ {
				cuts = append(cuts, i)
			}
			if got := extract(t, x, tt.doc, cuts...); got != want {
				t.Fatalf("byte by byte: got %q, want %q", got, want)
			}
		})
	}
}

// The text arrives while the document is still being written: a user
// reads the start of the answer before its end exists.
func TestTextExtractorIsIncremental(t *testing.T) {
	x := llm.NewTextExtractor("response", "message")
	steps := []struct{ in, want string }{
		{`{"route":"direct","response":{"mess`, ""},
		{`age":"Hel`, "Hel"},
		{`lo \u00`, "lo "},
		{`e9 and \ud83d`, "é and "},
		{`\ude00`, "😀"},
		{`!","memory_ops":[]},"message":"not this"}`, "!"},
	}
	for i, s := range steps {
		if got := x.Write(s.in); got != s.want {
			t.Fatalf("step %d: Write(%q) = %q, want %q", i, s.in, got, s.want)
		}
	}
	// A new answer (a repair call) starts from nothing.
	x.Reset()
	if got := x.Write(`{"response":{"message":"again"}}`); got != "again" {
		t.Fatalf("after Reset: %q", got)
	}
}

func FuzzTextExtractor(f *testing.F) {
	for _, tt := range extractCases {
		f.Add(tt.doc, uint16(len(tt.doc)/2))
	}
	f.Fuzz(func(t *testing.T, doc string, cut uint16) {
		var v map[string]any
		if json.Unmarshal([]byte(doc), &v) != nil || !utf8.ValidString(doc) || strings.Contains(doc, `\ud`) || strings.Contains(doc, `\uD`) {
			return // surrogate escapes decode differently in encoding/json's lenient mode
		}
		if strings.Count(doc, `message`) > 1 {
			return // duplicate keys: encoding/json keeps the last, a stream shows the first
		}
		want, _ := v["message"].(string)
		c := int(cut) % (len(doc) + 1)
		x := llm.NewTextExtractor("message")
		got := x.Write(doc[:c]) + x.Write(doc[c:])
		if got != want {
			t.Fatalf("doc %q cut %d: got %q, want %q", doc, c, got, want)
		}
	})
}
