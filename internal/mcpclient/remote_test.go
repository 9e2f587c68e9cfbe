package mcpclient

import (
	"context"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pflow-go/pflow/internal/pferr"
)

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// Plain http:// is refused for a remote host unless the entry says
// "insecure": true; loopback stays allowed.
func TestPlainHTTPToARemoteHostIsRefused(t *testing.T) {
	for _, c := range []struct {
		url      string
		insecure bool
		ok       bool
	}{
		{"http://mcp.example.com/mcp", false, false},
		{"http://mcp.example.com/mcp", true, true},
		{"http://127.0.0.1:8080/mcp", false, true},
		{"http://localhost:8080/mcp", false, true},
		{"http://[::1]:8080/mcp", false, true},
		{"https://mcp.example.com/mcp", false, true},
	} {
		cfg := map[string]any{"type": "http", "url": c.url}
		if c.insecure {
			cfg["insecure"] = true
		}
		_, err := Resolve("remote", cfg, env(nil), io.Discard)
		if (err == nil) != c.ok {
			t.Errorf("%s insecure=%v: err=%v, want ok=%v", c.url, c.insecure, err, c.ok)
		}
		if err != nil {
			pe := pferr.As(err)
			if !strings.Contains(pe.Message, "mcp.example.com") || !strings.Contains(pe.Hint, `"insecure": true`) || !strings.Contains(pe.Hint, "https://") {
				t.Errorf("the refusal names the host and both fixes: %q / %q", pe.Message, pe.Hint)
			}
		}
	}
}

// auth token_env / key_env read the credential from the environment at
// connect time; a variable that is not set is named with how to set it.
func TestCredentialsFromNamedEnvironmentVariables(t *testing.T) {
	bearer := map[string]any{"type": "http", "url": "https://h.example/mcp", "auth": map[string]any{"type": "bearer", "token_env": "SVC_TOKEN"}}
	s, err := Resolve("svc", bearer, env(map[string]string{"SVC_TOKEN": "tok-from-env-123"}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if s.Headers["Authorization"] != "Bearer tok-from-env-123" {
		t.Errorf("headers %v", s.Headers)
	}
	if s.Secrets.String("x tok-from-env-123 y") == "x tok-from-env-123 y" {
		t.Error("a credential read from the environment must be masked")
	}
	_, err = Resolve("svc", bearer, env(nil), io.Discard)
	pe := pferr.As(err)
	if err == nil || !strings.Contains(pe.Message, "auth.token_env names SVC_TOKEN, which is not set") || !strings.Contains(pe.Hint, "pflow settings set-env SVC_TOKEN=") {
		t.Errorf("missing variable: %v / %q", err, pe.Hint)
	}
	key := map[string]any{"type": "http", "url": "https://h.example/mcp", "auth": map[string]any{"type": "api_key", "key_env": "SVC_KEY", "header": "X-Key"}}
	s, err = Resolve("svc", key, env(map[string]string{"SVC_KEY": "k-456-abc"}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, v := range s.Headers {
		found = found || v == "k-456-abc"
	}
	if !found {
		t.Errorf("api_key from key_env not sent: %v", s.Headers)
	}
}

// A server with a self-signed certificate is refused with a plain message
// naming the host and ca_file; with ca_file pointing at its certificate it
// works.
func TestSelfSignedCertificateAndCAFile(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "tls-test", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "hello", Description: "says hello"}, func(ctx context.Context, r *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}}, nil, nil
	})
	ts := httptest.NewTLSServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	defer ts.Close()
	ctx := context.Background()

	plain, err := Resolve("selfsigned", map[string]any{"type": "http", "url": ts.URL, "startup_timeout": int64(60)}, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Discover(ctx, plain, io.Discard)
	if err == nil {
		t.Fatal("a self-signed certificate must not be trusted")
	}
	text := pferr.As(err).Message + "\n" + pferr.As(err).Hint
	host := strings.TrimPrefix(ts.URL, "https://")
	for _, want := range []string{"TLS certificate", host, "ca_file", "selfsigned"} {
		if !strings.Contains(text, want) {
			t.Errorf("the error lacks %q:\n%s", want, text)
		}
	}

	ca := filepath.Join(t.TempDir(), "ca.pem")
	os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw}), 0o600)
	trusted, err := Resolve("selfsigned", map[string]any{"type": "http", "url": ts.URL, "ca_file": ca, "startup_timeout": int64(60)}, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	tools, err := Discover(ctx, trusted, io.Discard)
	if err != nil || len(tools) != 1 || tools[0].Name != "hello" {
		t.Fatalf("with ca_file: %v %v", tools, err)
	}

	bad := filepath.Join(t.TempDir(), "bad.pem")
	os.WriteFile(bad, []byte("not a certificate"), 0o600)
	if _, err := Resolve("selfsigned", map[string]any{"type": "http", "url": ts.URL, "ca_file": bad}, env(nil), io.Discard); err == nil || !strings.Contains(err.Error(), "holds no PEM certificate") {
		t.Errorf("a bad ca_file: %v", err)
	}
}
