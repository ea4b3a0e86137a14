package config

import (
	"net"
	"net/url"
	"strconv"
	"strings"
)

// telegramWebhookPrefix is where a webhook's path must lie, so that it can
// never shadow a route of the web channel or the app.
const telegramWebhookPrefix = "/telegram/"

// validateTelegram checks channels.telegram: every key is checked when set,
// and what the channel needs to start when it is enabled.
func (c *Config) validateTelegram(p *problems) {
	t := c.Channels.Telegram
	// The token and the chat id usually come from the environment
	// (SILAS_TELEGRAM_*), which may hold them while the channel is off.
	if t.Enabled {
		p.required("channels.telegram.token", t.Token, "set SILAS_TELEGRAM_TOKEN to the token @BotFather gave, or disable silas.channels.telegram")
		if t.Token != "" && !validBotToken(t.Token) {
			p.add("channels.telegram.token", "is not a bot token (digits, a colon, then letters, digits, _ and -); copy it again from @BotFather")
		}
		if s := strings.TrimSpace(t.OwnerChatID); s != "" {
			if id, err := strconv.ParseInt(s, 10, 64); err != nil || id == 0 {
				p.add("channels.telegram.owner_chat_id", "must be a numeric chat id, got %q; leave it empty to pair a chat with `silas telegram pair`", t.OwnerChatID)
			}
		} else if !c.Channels.Web.Enabled {
			p.add("channels.telegram.owner_chat_id", "must be set while the web channel is off: pairing a chat (`silas telegram pair`) goes through the web channel; "+
				"set SILAS_TELEGRAM_OWNER_ID to your chat id or enable silas.channels.web")
		}
	}
	if msg := checkBotAPIURL(t.APIURL); msg != "" {
		p.add("channels.telegram.api_url", "%s", msg)
	}
	if t.WebhookURL != "" {
		if msg := checkWebhookURL(t.WebhookURL); msg != "" {
			p.add("channels.telegram.webhook_url", "%s", msg)
		} else if t.Enabled && !c.Channels.Web.Enabled {
			p.add("channels.telegram.webhook_url", "needs the web channel, which serves the webhook; enable silas.channels.web or remove webhook_url to use long polling")
		}
	}
	if t.WebAppURL != "" {
		u, err := url.Parse(t.WebAppURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
			p.add("channels.telegram.web_app_url", "%q is not the web app's address; write e.g. https://silas.example.com", t.WebAppURL)
		}
	}
}

// validBotToken reports whether s looks like a bot token: "<bot id>:<secret>".
func validBotToken(s string) bool {
	id, secret, ok := strings.Cut(s, ":")
	if !ok || id == "" || secret == "" {
		return false
	}
	for _, r := range id {
		if r < '0' || r > '9' {
			return false
		}
	}
	for _, r := range secret {
		if !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// checkBotAPIURL returns what is wrong with a Bot API base URL, "" when
// nothing is ("" itself means Telegram's server): the token travels in every request's path, so plain http is
// allowed only to a loopback server.
func checkBotAPIURL(s string) string {
	if s == "" {
		return "" // Telegram's own server
	}
	return checkSecretURL(s, "https://api.telegram.org", "bot token")
}

// checkWebhookURL returns what is wrong with a webhook URL, "" when nothing
// is. Telegram delivers only to https on ports 443, 80, 88 and 8443.
func checkWebhookURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return strconv.Quote(s) + " must be an https URL without query, e.g. https://silas.example.com/telegram/webhook (Telegram delivers only over https)"
	}
	if port := u.Port(); port != "" && port != "443" && port != "80" && port != "88" && port != "8443" {
		return "port " + port + " is not one Telegram delivers to; use 443, 80, 88 or 8443 (a reverse proxy can forward to the web channel)"
	}
	if u.EscapedPath() == "/telegram/pair" {
		return "/telegram/pair is the owner's pairing endpoint; use another path, e.g. https://" + u.Host + "/telegram/webhook"
	}
	if !strings.HasPrefix(u.EscapedPath(), telegramWebhookPrefix) || len(u.EscapedPath()) == len(telegramWebhookPrefix) {
		return strconv.Quote(s) + " needs a path under " + telegramWebhookPrefix + ", e.g. https://" + u.Host + "/telegram/webhook"
	}
	if net.ParseIP(u.Hostname()) == nil && !strings.Contains(u.Hostname(), ".") {
		return strconv.Quote(s) + " needs the public host name Telegram reaches, e.g. silas.example.com"
	}
	return ""
}
