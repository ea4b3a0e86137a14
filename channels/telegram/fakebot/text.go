package fakebot

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxTextLen is Telegram's limit on a message's text after entity parsing,
// which the fake counts, as Telegram counts entity offsets, in UTF-16 code
// units.
const MaxTextLen = 4096

// errParseMode means the parse mode is not one the fake implements.
var errParseMode = errors.New("unsupported parse_mode")

// ParseText parses text as Telegram does for parseMode ("", "HTML" or
// "MarkdownV2") and returns what the user reads: tags, markup and escapes
// removed, entities decoded. It fails, with the reason Telegram gives after
// "can't parse entities: ", where Telegram would refuse the text. Tests of
// renderers can call it directly.
func ParseText(parseMode, text string) (string, error) {
	if !utf8.ValidString(text) {
		return "", errors.New("strings must be encoded in UTF-8")
	}
	switch parseMode {
	case "":
		return text, nil
	case "HTML":
		return parseHTML(text)
	case "MarkdownV2":
		return parseMarkdownV2(text)
	default:
		return "", fmt.Errorf("%w %q (the fake implements HTML and MarkdownV2)", errParseMode, parseMode)
	}
}

// TextLen is the length Telegram checks against MaxTextLen: UTF-16 code
// units.
func TextLen(plain string) int {
	n := 0
	for _, r := range plain {
		n += utf16.RuneLen(r)
	}
	return n
}

// checkText validates a message text as sendMessage and editMessageText do
// and returns its plain form.
func checkText(text, parseMode string) (string, *apiError) {
	plain, err := ParseText(parseMode, text)
	switch {
	case errors.Is(err, errParseMode):
		return "", badRequest("unsupported parse_mode")
	case err != nil && !utf8.ValidString(text):
		return "", badRequest("strings must be encoded in UTF-8")
	case err != nil:
		return "", badRequest("can't parse entities: " + err.Error())
	case strings.TrimSpace(plain) == "":
		return "", badRequest("message text is empty")
	case TextLen(plain) > MaxTextLen:
		return "", badRequest("message is too long")
	}
	return plain, nil
}
