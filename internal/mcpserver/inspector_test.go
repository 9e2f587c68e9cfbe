package mcpserver

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// A second real client: the MCP Inspector's CLI (npm peers) drives
// `pflow mcp serve` over stdio and over streamable HTTP: it lists the 16
// tools, and runs a workflow and a node.
func TestE2EInspectorCLI(t *testing.T) {
	dir, node := peers(t)
	inspector := filepath.Join(dir, "node_modules", ".bin", "mcp-inspector")
	bin := buildPflow(t)
	home := t.TempDir()
	call := func(target []string, args ...string) map[string]any {
		t.Helper()
		out := runNode(t, dir, node, testEnv(home), append(append([]string{inspector, "--cli"}, target...), args...)...)
		var m map[string]any
		if err := json.Unmarshal([]byte(out[strings.Index(out, "{"):]), &m); err != nil {
			t.Fatalf("inspector output is not JSON: %v\n%s", err, out)
		}
		return m
	}
	envelope := func(res map[string]any) map[string]any {
		t.Helper()
		sc, _ := res["structuredContent"].(map[string]any)
		if sc == nil {
			t.Fatalf("no structuredContent: %v", res)
		}
		return sc
	}
	stdio := []string{bin, "mcp", "serve"}
	tools, _ := call(stdio, "--method", "tools/list")["tools"].([]any)
	if len(tools) != 16 {
		t.Fatalf("stdio: %d tools", len(tools))
	}
	wf := "# Hi\nSays hi.\n\n## Steps\n\n### s\nSay.\n- type: shell\n- command: echo hi from the inspector\n\n## Outputs\n\n### out\nThe line.\n- source: ${s.stdout}\n"
	env := envelope(call(stdio, "--method", "tools/call", "--tool-name", "workflow_execute", "--tool-arg", "workflow="+wf))
	data, _ := env["data"].(map[string]any)
	if env["success"] != true || !strings.Contains(jsonText(data["outputs"]), "hi from the inspector") {
		t.Fatalf("workflow_execute over stdio: %v", env)
	}

	_, url, _ := startHTTP(t, bin, home, "--no-auth") // an open loopback server
	httpTarget := []string{url, "--transport", "http"}
	if tools, _ := call(httpTarget, "--method", "tools/list")["tools"].([]any); len(tools) != 16 {
		t.Fatalf("http: %d tools", len(tools))
	}
	env = envelope(call(httpTarget, "--method", "tools/call", "--tool-name", "registry_run", "--tool-arg", "node_type=shell", "--tool-arg", `parameters={"command":"echo over http"}`))
	if env["success"] != true || !strings.Contains(jsonText(env["data"]), "over http") {
		t.Fatalf("registry_run over http: %v", env)
	}
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// An agent framework's MCP adapter: LangChain's @langchain/mcp-adapters
// (npm peers) loads pflow's 16 tools as LangChain tools over stdio and over
// streamable HTTP and invokes them as an agent would; a failure reaches it
// as the error envelope (testdata/peers/e2e/langchain.mjs).
func TestE2ELangChainAdapter(t *testing.T) {
	dir, node := peers(t)
	bin := buildPflow(t)
	home := t.TempDir()
	out := runNode(t, filepath.Join(dir, "e2e"), node, testEnv(home), "langchain.mjs", "stdio", bin)
	contains(t, out, `"step":"done"`)
	_, url, _ := startHTTP(t, bin, home, "--no-auth") // an open loopback server
	out = runNode(t, filepath.Join(dir, "e2e"), node, testEnv(home), "langchain.mjs", "http", url)
	contains(t, out, `"step":"done"`)
}
