package fakebot

import (
	"strings"
	"testing"
)

func TestParseText(t *testing.T) {
	tests := []struct {
		name, mode, text string
		plain            string // want, when wantErr is ""
		wantErr          string
	}{
		{"plain keeps everything", "", "a < b & *c*", "a < b & *c*", ""},
		{"html escapes", "HTML", "a &lt; b &amp; c &gt; d &quot;", `a < b & c > d "`, ""},
		{"html numeric", "HTML", "&#60;&#x3E;", "<>", ""},
		{"html tags", "HTML", "<b>bold <i>both</i></b> <a href=\"https://x.example\">link</a>", "bold both link", ""},
		{"html spoiler span", "HTML", `<span class="tg-spoiler">s</span>`, "s", ""},
		{"html pre code", "HTML", `<pre><code class="language-go">x</code></pre>`, "x", ""},
		{"html bare gt allowed", "HTML", "a > b", "a > b", ""},
		{"html bare lt", "HTML", "a < b", "", "start tag"},
		{"html bare amp", "HTML", "fish & chips", "", "entity"},
		{"html unknown entity", "HTML", "&nbsp;", "", "entity"},
		{"html unknown tag", "HTML", "<div>x</div>", "", "unsupported start tag"},
		{"html unclosed", "HTML", "<b>x", "", "can't find end tag"},
		{"html misnested", "HTML", "<b><i>x</b></i>", "", "unmatched end tag"},
		{"html stray end", "HTML", "x</b>", "", "unexpected end tag"},
		{"html a without href", "HTML", "<a>x</a>", "", "href"},
		{"html span without class", "HTML", "<span>x</span>", "", "tg-spoiler"},
		{"html unterminated tag", "HTML", "x <b", "", "unclosed"},
		{"md escaped reserved", "MarkdownV2", `1\+1\=2\. \(ok\) \#tag \- \! \{\} \| \> \~ \_ \* \[ \] \` + "`", "1+1=2. (ok) #tag - ! {} | > ~ _ * [ ] `", ""},
		{"md entities", "MarkdownV2", "*bold _italic_* __under__ ~strike~ ||spoiler||", "bold italic under strike spoiler", ""},
		{"md code needs no escapes", "MarkdownV2", "`a.b(c)`", "a.b(c)", ""},
		{"md pre with language", "MarkdownV2", "```go\nx := 1.0\n```", "x := 1.0\n", ""},
		{"md link", "MarkdownV2", `[the docs](https://x.example/a\)b)`, "the docs", ""},
		{"md blockquote", "MarkdownV2", "> quoted\n>more", " quoted\nmore", ""},
		{"md dot", "MarkdownV2", "Done.", "", "'.' is reserved"},
		{"md dash", "MarkdownV2", "a - b", "", "'-' is reserved"},
		{"md paren", "MarkdownV2", "f(x)", "", "'(' is reserved"},
		{"md bang", "MarkdownV2", "hi!", "", "'!' is reserved"},
		{"md gt mid line", "MarkdownV2", "a > b", "", "'>' is reserved"},
		{"md single pipe", "MarkdownV2", "a | b", "", "'|' is reserved"},
		{"md unclosed bold", "MarkdownV2", "*bold", "", "can't find end of bold"},
		{"md overlapping", "MarkdownV2", "*a _b* c_", "", "can't find end"},
		{"md unclosed code", "MarkdownV2", "`code", "", "can't find end of code"},
		{"md bracket without url", "MarkdownV2", "[x]", "", "']' is reserved"},
		{"md trailing backslash", "MarkdownV2", `x\`, "", "escapes nothing"},
		{"invalid utf8", "HTML", "a\xffb", "", "UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseText(tt.mode, tt.text)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseText(%q) error = %v, want one containing %q", tt.text, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseText(%q): %v", tt.text, err)
			}
			if got != tt.plain {
				t.Fatalf("ParseText(%q) = %q, want %q", tt.text, got, tt.plain)
			}
		})
	}
}

// Every reserved character alone, unescaped, is refused in MarkdownV2, and
// accepted once escaped.
func TestMarkdownV2EveryReservedChar(t *testing.T) {
	for _, c := range mdReserved {
		if _, err := ParseText("MarkdownV2", "x "+string(c)+" y"); err == nil && c != '>' {
			t.Errorf("unescaped %q accepted", c)
		}
		if got, err := ParseText("MarkdownV2", `x \`+string(c)+" y"); err != nil || got != "x "+string(c)+" y" {
			t.Errorf("escaped %q: %q, %v", c, got, err)
		}
	}
}

func TestTextLenCountsUTF16(t *testing.T) {
	if n := TextLen("a😀é"); n != 4 {
		t.Fatalf("TextLen = %d, want 4", n)
	}
}

func FuzzParseTextNeverPanics(f *testing.F) {
	for _, s := range []string{"<b>x</b>", "*a _b_*", "```x```", "[a](b)", "&#x;", "<a href='x'>", "\\"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, mode := range []string{"", "HTML", "MarkdownV2"} {
			_, _ = ParseText(mode, s)
		}
	})
}
