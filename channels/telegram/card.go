package telegram

import (
	"fmt"
	"strings"
	"time"
)

// Risk is a card's place on the risk ladder (spec 0.5.2).
type Risk string

// The risk levels of spec 0.5.2.
const (
	RiskLow          Risk = "low"
	RiskMedium       Risk = "medium"
	RiskHigh         Risk = "high"
	RiskIrreversible Risk = "irreversible"
)

// tappable reports whether a card of this risk may be answered with one
// tap in Telegram. High and irreversible cards want a slide or strong local
// auth, which Telegram cannot give; anything unknown is treated as high.
func (r Risk) tappable() bool { return r == RiskLow || r == RiskMedium }

func (r Risk) badge() string {
	switch r {
	case RiskLow:
		return "🟢"
	case RiskMedium:
		return "🟡"
	case RiskHigh:
		return "🟠"
	case RiskIrreversible:
		return "🔴"
	}
	return "⚪"
}

// Card is a channel-neutral description of an actionable card (a plan
// approval, a gate, a connection step) or of a link-only prompt such as
// secure input, which the runtime builds from its own card types.
type Card struct {
	// RequestID is the request the answer goes to.
	RequestID string
	// Title is the card's intent, one line.
	Title string
	// Body is the rationale and details, plain text.
	Body string
	// Risk decides whether Telegram may answer the card at all.
	Risk Risk
	// Buttons are the answers in CTA order (recommended first, decline
	// last). A card without buttons is link-only (secure input, for one:
	// secrets never travel through Telegram).
	Buttons []CardButton
	// WebURL opens the card in the web app: https, reachable from the
	// owner's phone. Required for high, irreversible and link-only cards.
	WebURL string
	// Expires is when the card stops accepting answers. Required for
	// cards with buttons.
	Expires time.Time
}

// CardButton is one answer to a card.
type CardButton struct {
	// Verdict is what the runtime receives (for example "approved").
	Verdict string
	// Label is what the button says.
	Label string
}

// webButtonLabel is the link button's label.
const webButtonLabel = "Open in Silas"

// RenderCard renders c for chatID as a message with an inline keyboard.
// A low or medium risk card gets one callback button per answer, each
// signed with s, plus a link to the web app when WebURL is set. A high,
// irreversible or unknown risk card, and a card without buttons, gets only
// the link: no approve button exists for Telegram to send. Title and body
// are escaped and cut to fit one message.
func RenderCard(s *Signer, chatID int64, c Card) (Message, error) {
	tappable := c.Risk.tappable() && len(c.Buttons) > 0
	var footer string
	switch {
	case !tappable && len(c.Buttons) > 0:
		footer = "\n\n<i>This one needs your confirmation in the Silas app.</i>"
	case !tappable:
		footer = "\n\n<i>Open the Silas app to continue.</i>"
	}
	m := Message{ChatID: chatID, HTML: cardText(c, footer)}
	if !tappable {
		if c.WebURL == "" {
			return Message{}, fmt.Errorf("%w (card %q)", ErrNoWebLink, c.RequestID)
		}
		m.Keyboard = Keyboard{{{Text: webButtonLabel, URL: c.WebURL}}}
		return m, m.validate()
	}
	for _, b := range c.Buttons {
		data, err := s.Sign(chatID, CallbackData{RequestID: c.RequestID, Verdict: b.Verdict, Expires: c.Expires})
		if err != nil {
			return Message{}, fmt.Errorf("card %q, button %q: %w", c.RequestID, b.Label, err)
		}
		m.Keyboard = append(m.Keyboard, []Button{{Text: b.Label, CallbackData: data}})
	}
	if c.WebURL != "" {
		m.Keyboard = append(m.Keyboard, []Button{{Text: webButtonLabel, URL: c.WebURL}})
	}
	return m, m.validate()
}

// RenderOutcome renders the edit that closes card c, sent as messageID in
// chatID: its text with outcome (for example "Approved", "Expired") below,
// and no keyboard, so nothing is left to tap.
func RenderOutcome(chatID int64, messageID int, c Card, outcome string) Message {
	footer := "\n\n<b>" + truncateHTML(outcome, 200) + "</b>"
	return Message{ChatID: chatID, EditID: messageID, HTML: cardText(c, footer)}
}

// cardText is the card's HTML: badge and title, then the body, cut so that
// with footer (already HTML) it fits one message.
func cardText(c Card, footer string) string {
	title := c.Title
	if strings.TrimSpace(title) == "" {
		title = "Silas needs your answer"
	}
	head := c.Risk.badge() + " <b>" + truncateHTML(title, 256) + "</b>"
	if c.Risk != "" {
		head += " · " + truncateHTML(string(c.Risk), 20) + " risk"
	}
	used := htmlLen(head) + htmlLen(footer)
	body := ""
	if strings.TrimSpace(c.Body) != "" {
		body = "\n\n" + truncateHTML(c.Body, MaxMessageLen-used-2)
	}
	return head + body + footer
}

// htmlLen is the length of HTML text in UTF-16 code units, tags and
// escapes included: never less than what Telegram counts.
func htmlLen(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}
