package netpolicy

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
)

func TestClass(t *testing.T) {
	for addr, want := range map[string]string{
		"169.254.169.254":                    "cloud metadata",
		"fd00:ec2::254":                      "cloud metadata",
		"::ffff:169.254.169.254":             "cloud metadata",
		"169.254.1.2":                        "link-local",
		"fe80::1":                            "link-local",
		"127.0.0.1":                          "loopback",
		"::1":                                "loopback",
		"0.0.0.0":                            "loopback",
		"::ffff:127.0.0.1":                   "loopback",
		"10.1.2.3":                           "private",
		"192.168.0.1":                        "private",
		"172.16.0.1":                         "private",
		"fc00::1":                            "private",
		"100.64.0.1":                         "private",
		"93.184.216.34":                      "",
		"2606:2800:220:1:248:1893:25c8:1946": "",
	} {
		if got := Class(netip.MustParseAddr(addr)); got != want {
			t.Errorf("Class(%s) = %q, want %q", addr, got, want)
		}
	}
}

// The rules, address class by address class, for an http step and for an
// MCP server, in a run from the command line and in an agent's run.
func TestCheckRules(t *testing.T) {
	meta := netip.MustParseAddr("169.254.169.254")
	ll := netip.MustParseAddr("fe80::1")
	lo := netip.MustParseAddr("127.0.0.1")
	priv := netip.MustParseAddr("10.0.0.5")
	pub := netip.MustParseAddr("93.184.216.34")
	cli, agent := &Policy{}, &Policy{Agent: true}
	for _, c := range []struct {
		name       string
		p          *Policy
		server     string
		ip         netip.Addr
		redirected bool
		refused    string // a part of the refusal, "" when allowed
	}{
		{"http cli metadata", cli, "", meta, false, ""},
		{"http nil-policy metadata", nil, "", meta, false, ""},
		{"http agent metadata", agent, "", meta, false, "may not reach a link-local"},
		{"http cli redirect metadata", cli, "", meta, true, "no redirect may lead to a link-local"},
		{"http agent redirect loopback", agent, "", lo, true, "no redirect may lead to a loopback"},
		{"http cli redirect loopback", cli, "", lo, true, ""},
		{"http agent loopback", agent, "", lo, false, ""},
		{"mcp cli metadata", cli, "s", meta, false, "no MCP server is reached at a link-local"},
		{"mcp nil-policy link-local", nil, "s", ll, false, "no MCP server is reached at a link-local"},
		{"mcp agent metadata", agent, "s", meta, false, "no MCP server is reached at a link-local"},
		{"mcp cli loopback", cli, "s", lo, false, ""},
		{"mcp agent private", agent, "s", priv, false, ""},
		{"mcp agent redirect private", agent, "s", priv, true, "no redirect may lead to a loopback"},
		{"mcp agent redirect private allowed", &Policy{Agent: true, AllowPrivate: true}, "s", priv, true, ""},
		{"mcp cli redirect link-local", cli, "s", ll, true, "no redirect may lead to a link-local"},
		{"mcp allow_private does not lift metadata", &Policy{AllowPrivate: true}, "s", meta, false, "link-local"},
		{"mcp allow_hosts address", &Policy{AllowHosts: []string{"169.254.169.254"}}, "s", meta, false, ""},
		{"mcp allow_hosts cidr", &Policy{Agent: true, AllowHosts: []string{"fe80::/10"}}, "s", ll, true, ""},
		{"mcp public", agent, "s", pub, true, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := NewGuard(c.p, c.server, "h.example").Check("h.example", c.ip, c.redirected, "https://from.example/")
			if c.refused == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var re *RefusedError
			if !errors.As(err, &re) || !strings.Contains(err.Error(), c.refused) {
				t.Fatalf("got %v, want a refusal saying %q", err, c.refused)
			}
		})
	}
}

// A host named in allow_hosts is allowed whatever address it has.
func TestAllowHostsByName(t *testing.T) {
	p := &Policy{AllowHosts: []string{" Metadata.Google.Internal "}}
	if err := NewGuard(p, "s", "").Check("metadata.google.internal", netip.MustParseAddr("169.254.169.254"), false, ""); err != nil {
		t.Fatal(err)
	}
	if err := NewGuard(p, "s", "").Check("other.internal", netip.MustParseAddr("169.254.169.254"), false, ""); err == nil {
		t.Fatal("a host allow_hosts does not name was allowed")
	}
}

// An MCP server's refusal names the server, the host, the address, the
// rule and the setting; an agent is told to ask the user.
func TestMCPRefusalText(t *testing.T) {
	err := NewGuard(&Policy{Agent: true}, "meta", "").Check("169.254.169.254", netip.MustParseAddr("169.254.169.254"), false, "")
	for _, want := range []string{"MCP server 'meta' at 169.254.169.254", "resolves to 169.254.169.254, a cloud metadata address",
		"no MCP server is reached at a link-local", `"network": {"allow_hosts": ["169.254.169.254"]}`, "settings.json", "ask the user"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal does not say %q: %v", want, err)
		}
	}
	if strings.Contains(err.Error(), "allow_private") {
		t.Errorf("allow_private is offered for a metadata address: %v", err)
	}
	err = NewGuard(&Policy{Agent: true}, "api", "").Check("127.0.0.1", netip.MustParseAddr("127.0.0.1"), true, "https://api.example/mcp")
	if err == nil || !strings.Contains(err.Error(), "the redirect of MCP server 'api' from https://api.example/mcp to 127.0.0.1") || !strings.Contains(err.Error(), `"allow_private": true`) {
		t.Errorf("redirect refusal: %v", err)
	}
}

// The address actually dialled is checked, whatever a name resolved to
// when the redirect was checked (DNS rebinding): the dial hook refuses a
// loopback address once the chain has followed a redirect.
func TestDialHookChecksDialledAddress(t *testing.T) {
	g := NewGuard(&Policy{Agent: true}, "", "rebind.example")
	ctx := WithGuard(context.Background(), g)
	if err := Control(ctx, "tcp4", "127.0.0.1:8080", nil); err != nil {
		t.Fatalf("the first request was refused: %v", err)
	}
	g.redirected, g.from = true, "http://rebind.example/"
	for _, addr := range []string{"127.0.0.1:8080", "[::1]:80", "10.1.2.3:80", "192.168.0.1:443", "[::ffff:127.0.0.1]:80", "0.0.0.0:80", "[fd00:ec2::254]:80"} {
		if err := Control(ctx, "tcp", addr, nil); err == nil {
			t.Errorf("dialling %s after a redirect was allowed", addr)
		}
	}
	if err := Control(ctx, "tcp", "93.184.216.34:80", nil); err != nil {
		t.Errorf("a public address was refused: %v", err)
	}
	// Without a guard, the hook lets everything through.
	if err := Control(context.Background(), "tcp", "169.254.169.254:80", nil); err != nil {
		t.Errorf("a dial without a guard was refused: %v", err)
	}
}
