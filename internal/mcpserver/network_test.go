package mcpserver

import (
	nethttp "net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A workflow an agent runs through workflow_execute does not follow a
// redirect to a loopback address (its first URL may be one, as before);
// settings.json's "network": {"allow_private": true} lets it.
func TestAgentRunRefusesRedirectToLoopback(t *testing.T) {
	admin := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) { w.Write([]byte("admin page")) }))
	defer admin.Close()
	front := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		nethttp.Redirect(w, r, admin.URL+"/admin", nethttp.StatusFound)
	}))
	defer front.Close()
	wf := "# Fetch\nFetches a page.\n\n## Steps\n\n### get\nGet it.\n- type: http\n- url: " + front.URL + "/start\n\n" +
		"## Outputs\n\n### page\nThe page.\n- source: ${get.response}\n"
	f := newFixture(t, nil)
	r := f.call("workflow_execute", map[string]any{"workflow": wf})
	if !r.IsError || !strings.Contains(r.errMsg(), "a loopback address") || !strings.Contains(r.errMsg(), "ask the user") {
		t.Fatalf("the redirect to loopback was followed or not explained:\n%s", r.Text)
	}
	os.WriteFile(filepath.Join(f.home, "settings.json"), []byte(`{"network": {"allow_private": true}}`), 0o600)
	r = f.call("workflow_execute", map[string]any{"workflow": wf})
	if r.IsError || r.data()["outputs"].(map[string]any)["page"] != "admin page" {
		t.Fatalf("allow_private did not let the redirect through:\n%s", r.Text)
	}
}
