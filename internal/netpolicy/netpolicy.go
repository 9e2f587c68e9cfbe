// Package netpolicy is where pflow's network connections may go: the
// classes of addresses (loopback, private, link-local, cloud metadata),
// the rules of a run's Policy, and the hooks that apply them where an
// address is dialled (Control), where a request is handed to a proxy
// (Proxy) and before a redirect is followed (Guard.Redirect). The http
// node and the MCP client's remote connections both go through it, so
// the rules are written once (docs/security.md, "Where a request may go"
// and "Remote MCP servers").
//
// Every address is checked where it is dialled (a net.Dialer Control
// hook, so a name that resolves to one address when checked and another
// when dialled cannot slip through) and, for a redirect, also before it
// is followed (so a reused connection is covered and the refusal names
// the redirect):
//
//   - a redirect to a link-local address (169.254.0.0/16, fe80::/10, the
//     cloud metadata services 169.254.169.254 and fd00:ec2::254) is
//     refused in every run;
//   - an MCP server is never reached at a link-local address;
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
// the request is sent (Proxy). The proxy resolves it again, so a name that
// resolves differently there is not covered.
package netpolicy

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Policy is where a run's connections may go. Agent is set for a run an
// agent started (pflow mcp serve); AllowPrivate and AllowHosts are the
// settings' network section (settings.NetworkSettings), which widen the
// rules. The zero Policy is a run from the command line with no settings.
type Policy struct {
	Agent        bool
	AllowPrivate bool
	AllowHosts   []string
}

// Class names the range of a refused address: "cloud metadata",
// "link-local", "loopback" or "private"; "" for a public one.
func Class(a netip.Addr) string {
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

// LinkLocal reports whether a class is link-local or cloud metadata: the
// addresses no redirect reaches and no MCP server is reached at.
func LinkLocal(class string) bool { return class == "link-local" || class == "cloud metadata" }

var (
	// Built from bytes, not parsed: nothing is allocated at start-up.
	metadataV4 = netip.AddrFrom4([4]byte{169, 254, 169, 254})
	metadataV6 = netip.AddrFrom16([16]byte{0xfd, 0x00, 0x0e, 0xc2, 14: 0x02, 15: 0x54}) // fd00:ec2::254
	cgnat      = netip.PrefixFrom(netip.AddrFrom4([4]byte{100, 64, 0, 0}), 10)
)

// AllowsHost reports whether the policy's allow_hosts names host (as
// written in the URL) or ip (an address or a CIDR range holding it). A nil
// policy allows none.
func (p *Policy) AllowsHost(host string, ip netip.Addr) bool {
	if p == nil {
		return false
	}
	for _, h := range p.AllowHosts {
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
		if pr, err := netip.ParsePrefix(h); err == nil && pr.Contains(ip.Unmap()) {
			return true
		}
	}
	return false
}

// RefusedError is a connection pflow refused to make. Its message names
// what was refused, the address, the rule and the setting that allows it.
type RefusedError struct{ msg string }

func (e *RefusedError) Error() string { return e.msg }

// Guard is one request's policy and where its redirect chain is. A
// request carries it in its context (WithGuard), where Control, Proxy and
// Redirect find it.
type Guard struct {
	policy Policy
	// server names the MCP server a connection is for ("" for an http
	// step): its refusals name it, and it is never reached at a
	// link-local address, in any run.
	server string
	mu     sync.Mutex
	// host is the host of the request being sent; redirected is set once
	// the chain follows a redirect, from is the URL it was redirected from.
	host       string
	redirected bool
	from       string
	// named is set when the "redirect" is an address the server gave in
	// its answer (a legacy SSE endpoint, an OAuth address), not an HTTP
	// redirect: the same rules, other words.
	named bool
	// viaProxy is set when the request goes through a proxy: the dial
	// hook then sees the proxy's address, not the host's.
	viaProxy bool
}

// NewGuard returns the guard of a request to host under p (nil: the zero
// Policy). server is the MCP server the request is for, "" for an http
// step.
func NewGuard(p *Policy, server, host string) *Guard {
	g := &Guard{server: server, host: host}
	if p != nil {
		g.policy = *p
	}
	return g
}

// guardKey keys a request context's *Guard.
type guardKey struct{}

// WithGuard returns ctx carrying g.
func WithGuard(ctx context.Context, g *Guard) context.Context {
	return context.WithValue(ctx, guardKey{}, g)
}

// FromContext returns the guard ctx carries (nil: none).
func FromContext(ctx context.Context) *Guard {
	g, _ := ctx.Value(guardKey{}).(*Guard)
	return g
}

func (g *Guard) state() (host string, redirected bool, from string, viaProxy bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.host, g.redirected, g.from, g.viaProxy
}

// Check returns why connecting to ip for host is refused (nil when it is
// allowed); redirected says the connection follows a redirect from from.
func (g *Guard) Check(host string, ip netip.Addr, redirected bool, from string) error {
	class := Class(ip)
	if class == "" || g.policy.AllowsHost(host, ip) {
		return nil
	}
	linkLocal := LinkLocal(class)
	g.mu.Lock()
	named := g.named
	g.mu.Unlock()
	hop := "redirect"
	if named {
		hop = "redirect, nor any address a server names,"
	}
	var rule string
	switch {
	case redirected && linkLocal:
		rule = "no " + hop + " may lead to a link-local or cloud metadata address"
	case linkLocal && g.server != "":
		rule = "no MCP server is reached at a link-local or cloud metadata address, in any run"
	case linkLocal && g.policy.Agent:
		rule = "a run an agent starts (pflow mcp serve) may not reach a link-local or cloud metadata address"
	case redirected && g.policy.Agent && !g.policy.AllowPrivate:
		rule = "in a run an agent starts (pflow mcp serve), no " + hop + " may lead to a loopback, private or link-local address"
	default:
		return nil
	}
	var what string
	switch {
	case g.server != "" && redirected && named:
		what = fmt.Sprintf("the request to %s, an address MCP server '%s' (%s) named", host, g.server, from)
	case g.server != "" && redirected:
		what = fmt.Sprintf("the redirect of MCP server '%s' from %s to %s", g.server, from, host)
	case g.server != "":
		what = fmt.Sprintf("the connection to MCP server '%s' at %s", g.server, host)
	case redirected:
		what = fmt.Sprintf("the redirect from %s to %s", from, host)
	default:
		what = fmt.Sprintf("the request to %s", host)
	}
	allow := fmt.Sprintf(`"network": {"allow_hosts": [%q]}`, host)
	if !linkLocal {
		allow += ` (or "network": {"allow_private": true} for every loopback and private address)`
	}
	fix := "If this address is meant to be reached, add " + allow + " to settings.json ($PFLOW_HOME/settings.json)"
	if g.policy.Agent {
		fix += "; an agent cannot change this: ask the user to add it"
	}
	return &RefusedError{msg: fmt.Sprintf("pflow refused %s: it resolves to %s, a %s address, and %s. %s.", what, ip, class, rule, fix)}
}

// Control is a net.Dialer's ControlContext hook: it checks the address
// actually dialled against the guard the dial's context carries (none:
// anything goes).
func Control(ctx context.Context, _, address string, _ syscall.RawConn) error {
	g := FromContext(ctx)
	if g == nil {
		return nil
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return nil
	}
	host, redirected, from, viaProxy := g.state()
	if viaProxy {
		return nil // the proxy the user configured; Proxy checked the host
	}
	return g.Check(host, ap.Addr(), redirected, from)
}

// Proxy wraps a transport's Proxy function: when a request goes through a
// proxy, the host it is for is resolved and checked against the request's
// guard before it is sent, since the dial hook sees only the proxy's
// address.
func Proxy(next func(*http.Request) (*url.URL, error)) func(*http.Request) (*url.URL, error) {
	return func(r *http.Request) (*url.URL, error) {
		proxy, err := next(r)
		g := FromContext(r.Context())
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
		_, redirected, from, _ := g.state()
		for _, ip := range Resolve(r.Context(), host) {
			if err := g.Check(host, ip, redirected, from); err != nil {
				return nil, err
			}
		}
		g.mu.Lock()
		g.viaProxy = true
		g.mu.Unlock()
		return proxy, nil
	}
}

// Resolve returns the addresses of host (itself when it is an address);
// none when it does not resolve (the request then fails where it is sent).
func Resolve(ctx context.Context, host string) []netip.Addr {
	if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return []netip.Addr{a}
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil
	}
	return addrs
}

// Redirect records that the guard's chain follows a redirect from from
// (as shown in messages) to to, then resolves to's host and checks every
// address it has, before the redirect is followed. A name that does not
// resolve fails when it is dialled.
func (g *Guard) Redirect(ctx context.Context, from string, to *url.URL) error {
	return g.hop(ctx, from, to, false)
}

// Named is Redirect for a request to an address the server at from named
// in an answer (a legacy SSE endpoint, an OAuth address): it obeys the
// rules of a redirect.
func (g *Guard) Named(ctx context.Context, from string, to *url.URL) error {
	return g.hop(ctx, from, to, true)
}

func (g *Guard) hop(ctx context.Context, from string, to *url.URL, named bool) error {
	host := to.Hostname()
	g.mu.Lock()
	g.host, g.redirected, g.from, g.named = host, true, from, named
	g.mu.Unlock()
	for _, ip := range Resolve(ctx, host) {
		if err := g.Check(host, ip, true, from); err != nil {
			return err
		}
	}
	return nil
}

// Transport returns a clone of Go's default transport whose every
// connection is checked: each address dialled by Control, the host of a
// request sent through a proxy (HTTP_PROXY, HTTPS_PROXY) by Proxy. The
// checks apply to requests whose context carries a Guard.
func Transport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, ControlContext: Control}
	t.DialContext = d.DialContext
	t.Proxy = Proxy(http.ProxyFromEnvironment)
	return t
}
