package httpauth

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// TrustedProxies are the addresses of the balancers and reverse proxies
// whose X-Forwarded-For and Forwarded headers are believed. The zero value
// trusts none: every request's client is its connecting address.
type TrustedProxies struct {
	prefixes []netip.Prefix
}

// ParseTrustedProxies parses addresses (192.0.2.7, ::1) and CIDR ranges
// (10.0.0.0/8, fd00::/8). It returns an error naming the first entry that
// is neither, and trusts nothing then.
func ParseTrustedProxies(entries []string) (TrustedProxies, error) {
	var tp TrustedProxies
	for _, e := range entries {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		if strings.Contains(e, "/") {
			p, err := netip.ParsePrefix(e)
			if err != nil {
				return TrustedProxies{}, fmt.Errorf("trusted proxy %q is not an address or CIDR range like 10.0.0.0/8: %w", e, err)
			}
			tp.prefixes = append(tp.prefixes, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(e)
		if err != nil {
			return TrustedProxies{}, fmt.Errorf("trusted proxy %q is not an address or CIDR range like 10.0.0.0/8: %w", e, err)
		}
		if a.Zone() != "" {
			return TrustedProxies{}, fmt.Errorf("trusted proxy %q: write the address without a zone (%%…)", e)
		}
		a = a.Unmap()
		tp.prefixes = append(tp.prefixes, netip.PrefixFrom(a, a.BitLen()))
	}
	return tp, nil
}

// Empty reports whether no proxy is trusted.
func (tp TrustedProxies) Empty() bool { return len(tp.prefixes) == 0 }

// trusts reports whether a is a trusted proxy.
func (tp TrustedProxies) trusts(a netip.Addr) bool {
	a = a.Unmap().WithZone("")
	for _, p := range tp.prefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

type clientAddrKey struct{}

// ClientAddresses returns middleware that finds each request's client
// address (what ClientAddr returns, and so what RateLimit and
// LimitConcurrent count by). It is the connecting address, unless that is
// one of proxies: then it is the right-most address of X-Forwarded-For
// that is not itself a trusted proxy (or, with no X-Forwarded-For, of
// Forwarded's for= parameters). Headers from any other address are never
// believed, so a client cannot choose its own bucket. When a trusted
// proxy sends no usable header, the client is the nearest trusted proxy
// (all behind it share one bucket, as without the setting).
func ClientAddresses(proxies TrustedProxies) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		if proxies.Empty() {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if addr, ok := proxies.client(r); ok {
				r = r.WithContext(context.WithValue(r.Context(), clientAddrKey{}, addr))
			}
			next.ServeHTTP(w, r)
		})
	}
}

// client is the client address of r behind a trusted proxy; false when
// r's connecting address is not one.
func (tp TrustedProxies) client(r *http.Request) (string, bool) {
	peer, err := netip.ParseAddr(connAddr(r))
	if err != nil || !tp.trusts(peer) {
		return "", false
	}
	hops, ok := forwardedFor(r.Header)
	if !ok {
		return peer.Unmap().String(), true
	}
	nearest := peer.Unmap()
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := parseHop(hops[i])
		if err != nil {
			// A hop a trusted proxy did not write well: what is left of
			// it cannot be believed.
			return nearest.String(), true
		}
		if !tp.trusts(a) {
			return a.String(), true
		}
		nearest = a
	}
	return nearest.String(), true
}

// forwardedFor is the chain of client addresses r's proxies report, the
// nearest last: X-Forwarded-For's entries, or, without that header,
// Forwarded's for= values (RFC 7239). false when neither is sent.
func forwardedFor(h http.Header) ([]string, bool) {
	if xff := h.Values("X-Forwarded-For"); len(xff) > 0 {
		var hops []string
		for _, line := range xff {
			for item := range strings.SplitSeq(line, ",") {
				hops = append(hops, strings.TrimSpace(item))
			}
		}
		return hops, true
	}
	fwd := h.Values("Forwarded")
	if len(fwd) == 0 {
		return nil, false
	}
	var hops []string
	for _, line := range fwd {
		for elem := range strings.SplitSeq(line, ",") {
			// An element that names no for= is one hop all the same;
			// an empty value is not an address, so the chain stops there.
			hop := ""
			for pair := range strings.SplitSeq(elem, ";") {
				k, v, _ := strings.Cut(strings.TrimSpace(pair), "=")
				if strings.EqualFold(strings.TrimSpace(k), "for") {
					hop = strings.Trim(strings.TrimSpace(v), `"`)
				}
			}
			hops = append(hops, hop)
		}
	}
	return hops, true
}

// parseHop parses one forwarded address: 192.0.2.1, 192.0.2.1:4711,
// 2001:db8::1, [2001:db8::1] or [2001:db8::1]:4711.
func parseHop(s string) (netip.Addr, error) {
	if a, err := netip.ParseAddr(s); err == nil {
		return a.Unmap().WithZone(""), nil
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap().WithZone(""), nil
	}
	if t, ok := strings.CutPrefix(s, "["); ok {
		if t, ok := strings.CutSuffix(t, "]"); ok {
			if a, err := netip.ParseAddr(t); err == nil {
				return a.Unmap().WithZone(""), nil
			}
		}
	}
	return netip.Addr{}, fmt.Errorf("forwarded address %q is not an IP address", s)
}

// connAddr is r's connecting address, without its port.
func connAddr(r *http.Request) string {
	if h, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return h
	}
	return r.RemoteAddr
}

// ClientAddr is the address of the client r comes from: the one
// ClientAddresses found behind a trusted proxy, else the connecting
// address, without its port.
func ClientAddr(r *http.Request) string {
	if a, ok := r.Context().Value(clientAddrKey{}).(string); ok {
		return a
	}
	return connAddr(r)
}
