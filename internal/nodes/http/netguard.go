package http

import (
	"context"
	"net/url"

	"github.com/pflow-go/pflow/internal/netpolicy"
	"github.com/pflow-go/pflow/internal/node"
)

// Where a request may connect: the rules and their checks are
// internal/netpolicy's (the MCP client's remote connections obey the
// same). Every address is checked where it is dialled (the transport's
// dial hook, netpolicy.Control), the host of a request sent through a
// proxy before it goes (netpolicy.Proxy), and every redirect before it is
// followed (checkRedirectTarget).

// NetRefusedError is a connection pflow refused to make.
type NetRefusedError = netpolicy.RefusedError

// withGuard returns ctx carrying the guard of a request to u.
func withGuard(ctx context.Context, p *node.NetPolicy, u *url.URL) context.Context {
	return netpolicy.WithGuard(ctx, netpolicy.NewGuard(p, "", u.Hostname()))
}

// checkRedirectTarget resolves the host of a redirect and checks every
// address it has, before the redirect is followed.
func checkRedirectTarget(ctx context.Context, from, to *url.URL) error {
	g := netpolicy.FromContext(ctx)
	if g == nil {
		return nil
	}
	return g.Redirect(ctx, displayURL(from), to)
}
