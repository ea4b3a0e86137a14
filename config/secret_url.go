package config

import (
	"net/url"
	"strconv"
)

// checkSecretURL returns what is wrong with s, the base URL of a service
// that receives a secret with every request (an API key, a bot token), or
// "" when nothing is: it must be absolute and https, or plain http to a
// loopback address, since plain http elsewhere would expose the secret.
// example is a correct URL to show; secret names what would leak.
func checkSecretURL(s, example, secret string) string {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return strconv.Quote(s) + " is not an absolute URL such as " + example
	}
	switch u.Scheme {
	case "https":
		return ""
	case "http":
		if isLoopbackHost(u.Hostname()) {
			return ""
		}
		return strconv.Quote(s) + " is plain http to a remote host, which would expose the " + secret + "; use https"
	}
	return strconv.Quote(s) + " must be https (or http to a loopback address)"
}
