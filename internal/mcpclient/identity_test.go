package mcpclient

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestIdentityDiffersByCredentials: the identity a server is reached as
// covers every credential after expansion — a literal header, a ${VAR} in
// a header or env, the value auth.token_env names — and the URL, command
// and args; configs differing only in a token differ.
func TestIdentityDiffersByCredentials(t *testing.T) {
	dir := t.TempDir()
	identity := func(entry map[string]any, env map[string]string) string {
		t.Helper()
		p := filepath.Join(dir, "mcp-servers.json")
		b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"s": entry}})
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return Identity(p, "s", func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	}
	remote := func(auth map[string]any, headers map[string]any) map[string]any {
		e := map[string]any{"type": "http", "url": "https://mcp.example.com/mcp"}
		if auth != nil {
			e["auth"] = auth
		}
		if headers != nil {
			e["headers"] = headers
		}
		return e
	}
	for _, c := range []struct {
		name       string
		alice, bob func() string
	}{
		{"auth.token_env value", func() string {
			return identity(remote(map[string]any{"type": "bearer", "token_env": "KB_TOKEN"}, nil), map[string]string{"KB_TOKEN": "alice-token"})
		}, func() string {
			return identity(remote(map[string]any{"type": "bearer", "token_env": "KB_TOKEN"}, nil), map[string]string{"KB_TOKEN": "bob-token"})
		}},
		{"literal auth token", func() string {
			return identity(remote(map[string]any{"type": "bearer", "token": "alice-token"}, nil), nil)
		}, func() string {
			return identity(remote(map[string]any{"type": "bearer", "token": "bob-token"}, nil), nil)
		}},
		{"header from ${VAR}", func() string {
			return identity(remote(nil, map[string]any{"Authorization": "Bearer ${T}"}), map[string]string{"T": "alice-token"})
		}, func() string {
			return identity(remote(nil, map[string]any{"Authorization": "Bearer ${T}"}), map[string]string{"T": "bob-token"})
		}},
		{"stdio env from ${VAR}", func() string {
			return identity(map[string]any{"command": "srv", "env": map[string]any{"TOKEN": "${T}"}}, map[string]string{"T": "alice-token"})
		}, func() string {
			return identity(map[string]any{"command": "srv", "env": map[string]any{"TOKEN": "${T}"}}, map[string]string{"T": "bob-token"})
		}},
		{"args", func() string {
			return identity(map[string]any{"command": "srv", "args": []any{"--token", "alice-token"}}, nil)
		}, func() string {
			return identity(map[string]any{"command": "srv", "args": []any{"--token", "bob-token"}}, nil)
		}},
		{"url", func() string {
			return identity(map[string]any{"type": "http", "url": "https://alice.example.com/mcp"}, nil)
		}, func() string {
			return identity(map[string]any{"type": "http", "url": "https://bob.example.com/mcp"}, nil)
		}},
	} {
		a1, a2, b := c.alice(), c.alice(), c.bob()
		if a1 != a2 {
			t.Errorf("%s: one config gives two identities (%s, %s)", c.name, a1, a2)
		}
		if a1 == b {
			t.Errorf("%s: alice's and bob's configs have one identity %s", c.name, a1)
		}
		if strings.Contains(a1, "alice") || strings.HasPrefix(a1, "unresolved:") {
			t.Errorf("%s: identity %q: want a digest of a resolved config", c.name, a1)
		}
	}
	// A server that cannot be resolved (its token_env unset) never shares
	// the identity of one that can.
	unset := identity(remote(map[string]any{"type": "bearer", "token_env": "KB_TOKEN"}, nil), nil)
	if !strings.HasPrefix(unset, "unresolved:") {
		t.Errorf("unresolved server: identity %q", unset)
	}
}
