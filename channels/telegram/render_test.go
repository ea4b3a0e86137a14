package telegram_test

import (
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/silas-ai/silas/channels/telegram"
	"github.com/silas-ai/silas/channels/telegram/fakebot"
)

func utf16Len(s string) int { return len(utf16.Encode([]rune(s))) }

func TestEscapeHTML(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{"a < b > c & d", "a &lt; b &gt; c &amp; d"},
		{"&lt; already", "&amp;lt; already"},
		{`"quotes" 'stay'`, `"quotes" 'stay'`},
		{"<b>not bold</b>", "&lt;b&gt;not bold&lt;/b&gt;"},
		{"MarkdownV2 specials _*[]()~`#+-=|{}.! are plain in HTML", "MarkdownV2 specials _*[]()~`#+-=|{}.! are plain in HTML"},
	}
	for _, tt := range tests {
		got := telegram.EscapeHTML(tt.in)
		if got != tt.want {
			t.Errorf("EscapeHTML(%q) = %q, want %q", tt.in, got, tt.want)
		}
		plain, err := fakebot.ParseText("HTML", got)
		if err != nil || plain != tt.in {
			t.Errorf("Telegram would read %q as %q (err %v)", got, plain, err)
		}
	}
}

func TestSplitCutsAtTheBestBoundary(t *testing.T) {
	para := func(n int, c string) string { return strings.Repeat(c, n) }
	tests := []struct {
		name  string
		text  string
		limit int
		want  []string
	}{
		{"fits", "short answer", 4096, []string{"short answer"}},
		{"empty", "", 4096, nil},
		{"paragraph", para(30, "a") + "\n\n" + para(30, "b"), 40, []string{para(30, "a") + "\n\n", para(30, "b")}},
		{"paragraph beats later line", para(25, "a") + "\n\n" + para(5, "b") + "\n" + para(20, "c"), 40,
			[]string{para(25, "a") + "\n\n", para(5, "b") + "\n" + para(20, "c")}},
		{"line", para(30, "a") + "\n" + para(30, "b"), 40, []string{para(30, "a") + "\n", para(30, "b")}},
		{"word", "alpha beta gamma delta epsilon zeta eta theta", 20, []string{"alpha beta gamma ", "delta epsilon zeta ", "eta theta"}},
		{"early paragraph ignored", "ab\n\n" + "cccc dddd eeee ffff gggg", 20, []string{"ab\n\ncccc dddd eeee ", "ffff gggg"}},
		{"runes", para(25, "x"), 10, []string{para(10, "x"), para(10, "x"), para(5, "x")}},
		{"escapes counted", para(6, "&"), 10, []string{"&&", "&&", "&&"}},
		{"astral runes", strings.Repeat("😀", 9), 8, []string{strings.Repeat("😀", 4), strings.Repeat("😀", 4), "😀"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := telegram.Split(tt.text, tt.limit)
			if strings.Join(got, "\x00") != strings.Join(tt.want, "\x00") || len(got) != len(tt.want) {
				t.Fatalf("Split = %q, want %q", got, tt.want)
			}
		})
	}
}

// The acceptance case of issue 11: a 5,000-character answer arrives as two
// messages, split at a paragraph, reserved characters escaped, both
// accepted by Telegram and reading back as the answer.
func TestRenderTextLongAnswerThroughTelegram(t *testing.T) {
	s := fakebot.Start(t, fakebot.Options{})
	s.KnownChat(1)
	c := newClient(t, s)
	var b strings.Builder
	for b.Len() < 5000 {
		b.WriteString("Step <n> & result: a > b, done. ")
		if b.Len()%700 < 40 {
			b.WriteString("\n\n")
		}
	}
	answer := b.String()[:5000]
	chunks := telegram.RenderText(answer)
	if len(chunks) != 2 {
		t.Fatalf("%d chunks, want 2", len(chunks))
	}
	var plain strings.Builder
	for _, ch := range chunks {
		if _, err := c.Send(testCtx(t), telegram.Message{ChatID: 1, HTML: ch}); err != nil {
			t.Fatalf("Telegram refused a chunk: %v", err)
		}
	}
	for _, m := range s.Sent() {
		if !strings.Contains(m.Text, "&lt;n&gt; &amp;") {
			t.Fatalf("reserved characters not escaped in %q", m.Text[:80])
		}
		plain.WriteString(m.Plain)
	}
	if plain.String() != answer {
		t.Fatal("the messages do not read back as the answer")
	}
	if first := s.Sent()[0].Plain; !strings.HasSuffix(first, "\n\n") {
		t.Fatalf("first message ends %q, want a paragraph break", first[len(first)-20:])
	}
}

func TestRenderTextSkipsBlankChunks(t *testing.T) {
	if got := telegram.RenderText(" \n\n \t"); len(got) != 0 {
		t.Fatalf("blank answer rendered as %q", got)
	}
	got := telegram.RenderText("a" + strings.Repeat(" ", 9000) + "b")
	for _, c := range got {
		if strings.TrimSpace(c) == "" {
			t.Fatalf("blank chunk in %q", got)
		}
	}
	if len(got) != 2 {
		t.Fatalf("%d chunks, want 2 (a, b)", len(got))
	}
}

func checkSplit(t *testing.T, text string, limit int) {
	t.Helper()
	chunks := telegram.Split(text, limit)
	want := strings.ToValidUTF8(text, "\uFFFD")
	if got := strings.Join(chunks, ""); got != want {
		t.Fatalf("chunks do not concatenate to the text: %q vs %q", got, want)
	}
	eff := min(max(limit, 8), telegram.MaxMessageLen)
	for _, c := range chunks {
		if c == "" {
			t.Fatal("empty chunk")
		}
		esc := telegram.EscapeHTML(c)
		if n := utf16Len(esc); n > eff {
			t.Fatalf("chunk escapes to %d UTF-16 units, limit %d", n, eff)
		}
		if !utf8.ValidString(c) {
			t.Fatalf("chunk %q is not valid UTF-8 (a rune was cut)", c)
		}
		plain, err := fakebot.ParseText("HTML", esc)
		if err != nil || plain != c {
			t.Fatalf("Telegram reads chunk %q as %q (err %v)", esc, plain, err)
		}
	}
}

func FuzzSplit(f *testing.F) {
	f.Add("hello world", 8)
	f.Add("a\n\nb\nc d", 9)
	f.Add(strings.Repeat("&<>", 50), 13)
	f.Add(strings.Repeat("😀 x\n", 40), 10)
	f.Add("\xff\xfe broken", 8)
	f.Add(strings.Repeat("word ", 2000), 4096)
	f.Fuzz(func(t *testing.T, text string, limit int) {
		checkSplit(t, text, limit%200)
		checkSplit(t, text, telegram.MaxMessageLen)
	})
}

// Large inputs at the real limit, which the fuzzer's small inputs do not
// reach.
func TestSplitLargeInputs(t *testing.T) {
	inputs := []string{
		strings.Repeat("&", 9000),
		strings.Repeat("😀", 5000),
		strings.Repeat("x", 4096),
		strings.Repeat("x", 4097),
		strings.Repeat("para one.\n\n", 1000),
		strings.Repeat("line\n", 3000),
		strings.Repeat("é<", 4000),
	}
	for _, in := range inputs {
		checkSplit(t, in, telegram.MaxMessageLen)
	}
	if got := telegram.Split(strings.Repeat("x", 4096), telegram.MaxMessageLen); len(got) != 1 {
		t.Fatalf("4096 characters split into %d", len(got))
	}
}
