package web

import (
	"fmt"
	"net/netip"
	"strings"
)

// proxies is the parsed Options.TrustedProxies.
type proxies []netip.Prefix

// parseProxies parses IPs ("10.0.0.1", "::1") and CIDRs ("10.0.0.0/8").
func parseProxies(list []string) (proxies, error) {
	ps := make(proxies, 0, len(list))
	for _, s := range list {
		s = strings.TrimSpace(s)
		if p, err := netip.ParsePrefix(s); err == nil {
			ps = append(ps, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("trusted proxy %q is neither an IP nor a CIDR (e.g. 10.0.0.1 or 10.0.0.0/8)", s)
		}
		a = a.Unmap()
		ps = append(ps, netip.PrefixFrom(a, a.BitLen()))
	}
	return ps, nil
}

// trusts reports whether a is a trusted proxy.
func (ps proxies) trusts(a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// clientIP returns the address the per-IP limits count: the TCP peer,
// unless the peer is a trusted proxy and X-Forwarded-For names a client.
// Then it is the rightmost X-Forwarded-For address that is not a trusted
// proxy itself (the ones to its left were written by the client and prove
// nothing). A header that does not parse is ignored, leaving the peer.
// xff holds every X-Forwarded-For header value, in order.
func (ps proxies) clientIP(peer netip.Addr, xff []string) netip.Addr {
	peer = peer.Unmap()
	if len(ps) == 0 || !peer.IsValid() || !ps.trusts(peer) {
		return peer
	}
	var hops []netip.Addr
	for _, h := range xff {
		for _, part := range strings.Split(h, ",") {
			a, err := netip.ParseAddr(strings.TrimSpace(part))
			if err != nil {
				return peer
			}
			hops = append(hops, a.Unmap())
		}
	}
	if len(hops) == 0 {
		return peer
	}
	for i := len(hops) - 1; i >= 0; i-- {
		if !ps.trusts(hops[i]) {
			return hops[i]
		}
	}
	return hops[0] // every hop is a proxy: the first is as close to a client as there is
}
