package http

import (
	"context"
	"fmt"
	"net"
	nethttp "net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"syscall"

	"github.com/pflow-go/pflow/internal/node"
)

// Where a request may connect. Every address is checked where it is
// dialled (a net.Dialer Control hook, so a name that resolves to one
// address when checked and another when dialled cannot slip through) and,
// for a redirect, also before it is followed (so a reused connection is
// covered and the refusal names the redirect):
//
//   - a redirect to a link-local address (169.254.0.0/16, fe80::/10, the
//     cloud metadata services 169.254.169.254 and fd00:ec2::254) is refused
//     in every run;
//   - in a run an agent started (pflow mcp serve), a request to a
//     link-local address is refused, and a redirect to a loopback or
//     private address too.
//
// settings.json's "network" section lifts them: "allow_private": true the
// loopback and private rule, "allow_hosts" every rule for the hosts named.
//
// Through a proxy (HTTP_PROXY, HTTPS_PROXY) the connection goes to the
// proxy, whose address is the user's own configuration and is not checked;
// the host the request is for is resolved here and checked instead, before
// the request is sent (guardedProxy). The proxy resolves it again, so a
// name that resolves differently there is not covered.

// addrClass names the range of a refused address ("" for a public one).
func addrClass(a netip.Addr) string {
	a = a.Unmap()
	switch {
	case a == metadataV6 || a == metadataV4:
		return "cloud metadata"
	case a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast():
		return "link-local"
	case a.IsLoopback() || a.IsUnspecified():
		return "loopback"
	case a.IsPrivate() || cgnat.Contains(a):
		return "private"
	}
	return ""
}

var (
	// Built from bytes, not parsed: nothing is allocated at start-up.
	metadataV4 = netip.AddrFrom4([4]byte{169, 254, 169, 254})
	metadataV6 = netip.AddrFrom16([16]byte{0xfd, 0x00, 0x0e, 0xc2, 14: 0x02, 15: 0x54}) // fd00:ec2::254
	cgnat      = netip.PrefixFrom(netip.AddrFrom4([4]byte{100, 64, 0, 0}), 10)
)

// guardKey keys the request context's *chainGuard.
type guardKey struct{}

// chainGuard is one request's policy and where its redirect chain is.
type chainGuard struct {
	policy node.NetPolicy
	mu     sync.Mutex
	// host is the host of the request being sent; redirected is set once
	// the chain follows a redirect, from is the URL it was redirected from.
	host       string
	redirected bool
	from       string
	// viaProxy is set when the request goes through a proxy: the dial
	// hook then sees the proxy's address, not the host's.
	viaProxy bool
}

func (g *chainGuard) state() (host string, redirected bool, from string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.host, g.redirected, g.from
}

// withGuard returns ctx carrying the guard of a request to u.
func withGuard(ctx context.Context, p *node.NetPolicy, u *url.URL) context.Context {
	g := &chainGuard{host: u.Hostname()}
	if p != nil {
		g.policy = *p
	}
	return context.WithValue(ctx, guardKey{}, g)
}

// NetRefusedError is a connection pflow refused to make.
type NetRefusedError struct{ msg string }

func (e *NetRefusedError) Error() string { return e.msg }

// allowedHost reports whether the settings' allow_hosts names host or ip.
func (g *chainGuard) allowedHost(host string, ip netip.Addr) bool {
	for _, h := range g.policy.AllowHosts {
		h = strings.TrimSpace(h)
		if h == "" {
			continue
		}
		if strings.EqualFold(strings.Trim(h, "[]"), strings.Trim(host, "[]")) {
			return true
		}
		if a, err := netip.ParseAddr(strings.Trim(h, "[]")); err == nil && a.Unmap() == ip.Unmap() {
			return true
		}
		if p, err := netip.ParsePrefix(h); err == nil && p.Contains(ip.Unmap()) {
			return true
		}
	}
	return false
}

// check returns why connecting to ip for host is refused (nil when it is
// allowed).
func (g *chainGuard) check(host string, ip netip.Addr, redirected bool, from string) error {
	class := addrClass(ip)
	if class == "" || g.allowedHost(host, ip) {
		return nil
	}
	linkLocal := class == "link-local" || class == "cloud metadata"
	var rule string
	switch {
	case redirected && linkLocal:
		rule = "no redirect may lead to a link-local or cloud metadata address"
	case linkLocal && g.policy.Agent:
		rule = "a run an agent starts (pflow mcp serve) may not reach a link-local or cloud metadata address"
	case redirected && g.policy.Agent && !g.policy.AllowPrivate:
		rule = "in a run an agent starts (pflow mcp serve), no redirect may lead to a loopback, private or link-local address"
	default:
		return nil
	}
	what := fmt.Sprintf("the request to %s", host)
	if redirected {
		what = fmt.Sprintf("the redirect from %s to %s", from, host)
	}
	allow := fmt.Sprintf(`"network": {"allow_hosts": [%q]}`, host)
	if !linkLocal {
		allow += ` (or "network": {"allow_private": true} for every loopback and private address)`
	}
	fix := "If this address is meant to be reached, add " + allow + " to settings.json ($PFLOW_HOME/settings.json)"
	if g.policy.Agent {
		fix += "; an agent cannot change this: ask the user to add it"
	}
	return &NetRefusedError{msg: fmt.Sprintf("pflow refused %s: it resolves to %s, a %s address, and %s. %s.", what, ip, class, rule, fix)}
}

// guardControl is the dialer's Control hook: it checks the address
// actually dialled against the request's guard.
func guardControl(ctx context.Context, _, address string, _ syscall.RawConn) error {
	g, _ := ctx.Value(guardKey{}).(*chainGuard)
	if g == nil {
		return nil
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return nil
	}
	g.mu.Lock()
	viaProxy := g.viaProxy
	g.mu.Unlock()
	if viaProxy {
		return nil // the proxy the user configured; guardedProxy checked the host
	}
	host, redirected, from := g.state()
	return g.check(host, ap.Addr(), redirected, from)
}

// guardedProxy wraps a transport's Proxy function: when a request goes
// through a proxy, the host it is for is resolved and checked against the
// request's guard before it is sent, since the dial hook sees only the
// proxy's address.
func guardedProxy(next func(*nethttp.Request) (*url.URL, error)) func(*nethttp.Request) (*url.URL, error) {
	return func(r *nethttp.Request) (*url.URL, error) {
		proxy, err := next(r)
		g, _ := r.Context().Value(guardKey{}).(*chainGuard)
		if g == nil {
			return proxy, err
		}
		// Each request of a redirect chain decides for itself: a hop that
		// goes direct (NO_PROXY) is checked where it is dialled.
		g.mu.Lock()
		g.viaProxy = false
		g.mu.Unlock()
		if err != nil || proxy == nil {
			return proxy, err
		}
		host := r.URL.Hostname()
		_, redirected, from := g.state()
		for _, ip := range resolve(r.Context(), host) {
			if err := g.check(host, ip, redirected, from); err != nil {
				return nil, err
			}
		}
		g.mu.Lock()
		g.viaProxy = true
		g.mu.Unlock()
		return proxy, nil
	}
}

// resolve returns the addresses of host (itself when it is an address);
// none when it does not resolve (the request then fails where it is sent).
func resolve(ctx context.Context, host string) []netip.Addr {
	if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return []netip.Addr{a}
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil
	}
	return addrs
}

// checkRedirectTarget resolves the host of a redirect and checks every
// address it has, before the redirect is followed.
func checkRedirectTarget(ctx context.Context, from, to *url.URL) error {
	g, _ := ctx.Value(guardKey{}).(*chainGuard)
	if g == nil {
		return nil
	}
	host := to.Hostname()
	shownFrom := displayURL(from)
	g.mu.Lock()
	g.host, g.redirected, g.from = host, true, shownFrom
	g.mu.Unlock()
	// A name that does not resolve fails when it is dialled.
	for _, ip := range resolve(ctx, host) {
		if err := g.check(host, ip, true, shownFrom); err != nil {
			return err
		}
	}
	return nil
}
