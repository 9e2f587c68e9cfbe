package http

import (
	"context"
	nethttp "net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/pflow-go/pflow/internal/netpolicy"
	"github.com/pflow-go/pflow/internal/node"
)

// redirectChain starts an "admin" server on 127.0.0.1 and a public-facing
// one whose /start redirects to /hop, which redirects to the admin page.
// It returns the start URL and how many times the admin page was read.
func redirectChain(t *testing.T) (string, *atomic.Int32) {
	t.Helper()
	var hits atomic.Int32
	admin := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		hits.Add(1)
		w.Write([]byte("admin secrets"))
	}))
	t.Cleanup(admin.Close)
	front := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		switch r.URL.Path {
		case "/start":
			nethttp.Redirect(w, r, "/hop", nethttp.StatusFound)
		case "/hop":
			nethttp.Redirect(w, r, admin.URL+"/admin", nethttp.StatusFound)
		}
	}))
	t.Cleanup(front.Close)
	return front.URL + "/start", &hits
}

func runNet(t *testing.T, p *node.NetPolicy, rawURL string) *node.Result {
	t.Helper()
	res, err := Spec().Node.Run(context.Background(), &node.Request{NodeID: "h", Params: map[string]any{"url": rawURL, "timeout": int64(5)}, Network: p})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// In a run an agent started, a redirect chain that ends on loopback is
// refused before the loopback page is read; the failure names the host,
// the address, the rule and the setting, and is not retried.
func TestAgentRunRedirectToLoopbackRefused(t *testing.T) {
	start, hits := redirectChain(t)
	res := runNet(t, &node.NetPolicy{Agent: true}, start)
	if res.Action != "error" {
		t.Fatalf("the redirect to loopback was followed: %+v", res.Outputs)
	}
	if hits.Load() != 0 {
		t.Fatal("the loopback page was read")
	}
	msg, _ := res.Outputs["error"].(string)
	for _, want := range []string{"redirect from http://127.0.0.1:", "to 127.0.0.1", "resolves to 127.0.0.1, a loopback address",
		"no redirect may lead to a loopback, private or link-local address", `"network": {"allow_hosts": ["127.0.0.1"]}`, `"allow_private": true`, "ask the user"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the refusal does not say %q:\n%s", want, msg)
		}
	}
	if !res.Permanent {
		t.Error("a refusal is retried")
	}
}

// The same chain is followed in a run from the command line, and in an
// agent's run when settings allow private addresses or name the host.
func TestRedirectToLoopbackAllowed(t *testing.T) {
	for _, c := range []struct {
		name string
		p    *node.NetPolicy
	}{
		{"cli", &node.NetPolicy{}},
		{"no-policy", nil},
		{"allow_private", &node.NetPolicy{Agent: true, AllowPrivate: true}},
		{"allow_hosts", &node.NetPolicy{Agent: true, AllowHosts: []string{"127.0.0.1"}}},
		{"allow_hosts-cidr", &node.NetPolicy{Agent: true, AllowHosts: []string{"127.0.0.0/8"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			start, hits := redirectChain(t)
			res := runNet(t, c.p, start)
			if res.Action == "error" || res.Outputs["response"] != "admin secrets" || hits.Load() != 1 {
				t.Fatalf("res=%+v", res)
			}
		})
	}
}

// An agent's initial URL on loopback is as before: allowed.
func TestAgentRunInitialLoopbackAllowed(t *testing.T) {
	srv := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) { w.Write([]byte("ok")) }))
	defer srv.Close()
	if res := runNet(t, &node.NetPolicy{Agent: true}, srv.URL); res.Action == "error" {
		t.Fatalf("res=%+v", res)
	}
}

// A redirect to the cloud metadata address is refused in every run; an
// agent's request to it is refused even as its first URL (at the dial,
// before any packet is sent).
func TestMetadataAddressRefused(t *testing.T) {
	meta := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		nethttp.Redirect(w, r, "http://169.254.169.254/latest/meta-data/iam/", nethttp.StatusFound)
	}))
	defer meta.Close()
	for _, p := range []*node.NetPolicy{nil, {}, {Agent: true}, {Agent: true, AllowPrivate: true}} {
		res := runNet(t, p, meta.URL)
		if res.Action != "error" || !strings.Contains(errText(res), "169.254.169.254, a cloud metadata address") ||
			!strings.Contains(errText(res), "no redirect may lead to a link-local or cloud metadata address") {
			t.Errorf("policy %+v: the redirect to the metadata address was not refused: %+v", p, res)
		}
		if strings.Contains(errText(res), "allow_private") {
			t.Errorf("allow_private is offered for a metadata address: %s", errText(res))
		}
	}
	res := runNet(t, &node.NetPolicy{Agent: true}, "http://169.254.169.254/latest/meta-data/")
	if res.Action != "error" || !strings.Contains(errText(res), "pflow refused the request to 169.254.169.254") ||
		!strings.Contains(errText(res), "may not reach a link-local or cloud metadata address") {
		t.Fatalf("an agent's request to the metadata address was not refused: %+v", res)
	}
	// allow_hosts lifts it.
	allowed := &node.NetPolicy{Agent: true, AllowHosts: []string{"169.254.169.254"}}
	if err := netpolicy.NewGuard(allowed, "", "169.254.169.254").Check("169.254.169.254", netip.MustParseAddr("169.254.169.254"), true, "x"); err != nil {
		t.Fatal(err)
	}
}

func errText(res *node.Result) string {
	s, _ := res.Outputs["error"].(string)
	return s
}

// proxiedNode is the http node with a transport that sends every request
// through proxy, as HTTP_PROXY would.
func proxiedNode(proxy string) node.Node {
	t := netpolicy.Transport()
	pu, _ := url.Parse(proxy)
	t.Proxy = netpolicy.Proxy(func(*nethttp.Request) (*url.URL, error) { return pu, nil })
	return httpNode{client: newClient(t)}
}

// Through a proxy the dial hook sees only the proxy's address: the host a
// request is for is resolved and checked before the request goes to the
// proxy, and the proxy itself (the user's own, often on a private address)
// is not refused.
func TestProxiedRequestChecksItsHost(t *testing.T) {
	var hits atomic.Int32
	proxy := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		hits.Add(1)
		w.Write([]byte("proxied " + r.URL.String()))
	}))
	defer proxy.Close()
	n := proxiedNode(proxy.URL)
	run := func(p *node.NetPolicy, target string) *node.Result {
		t.Helper()
		res, err := n.Run(context.Background(), &node.Request{NodeID: "h", Params: map[string]any{"url": target, "timeout": int64(5)}, Network: p})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := run(&node.NetPolicy{Agent: true}, "http://169.254.169.254/latest/meta-data/")
	if res.Action != "error" || !strings.Contains(errText(res), "pflow refused the request to 169.254.169.254") || hits.Load() != 0 {
		t.Fatalf("an agent's request to the metadata address through a proxy: %+v (proxy hits %d)", res, hits.Load())
	}
	// HTTPS goes through the proxy by CONNECT: the host is checked the same.
	if res := run(&node.NetPolicy{Agent: true}, "https://[fd00:ec2::254]/latest/"); res.Action != "error" || !strings.Contains(errText(res), "cloud metadata") || hits.Load() != 0 {
		t.Fatalf("an HTTPS request to the IPv6 metadata address through a proxy: %+v (proxy hits %d)", res, hits.Load())
	}
	// A public host goes through the proxy, whose own loopback address is
	// not held against it, in an agent's run too.
	res = run(&node.NetPolicy{Agent: true}, "http://93.184.216.34/")
	if res.Action == "error" || hits.Load() != 1 {
		t.Fatalf("a public host through the proxy: %+v (proxy hits %d)", res, hits.Load())
	}
	// allow_hosts lifts the rule through a proxy as it does directly.
	res = run(&node.NetPolicy{Agent: true, AllowHosts: []string{"169.254.169.254"}}, "http://169.254.169.254/x")
	if res.Action == "error" || hits.Load() != 2 {
		t.Fatalf("an allowed host through the proxy: %+v", res)
	}
}
