package mcpclient

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestValidateEntryMessages(t *testing.T) {
	cases := []struct {
		name string
		cfg  map[string]any
		want string // "" = valid
	}{
		{"stdio ok", map[string]any{"command": "npx", "args": []any{"-y", "x"}, "env": map[string]any{"T": "${T}"}}, ""},
		{"stdio missing command", map[string]any{"args": []any{}}, "stdio configuration requires 'command' field"},
		{"stdio empty command", map[string]any{"command": " "}, "Command cannot be empty"},
		{"stdio args not list", map[string]any{"command": "x", "args": "a b"}, "Arguments must be a list"},
		{"env not dict", map[string]any{"command": "x", "env": []any{"A=1"}}, "Environment variables must be a dictionary"},
		{"http ok", map[string]any{"type": "http", "url": "https://h/mcp", "auth": map[string]any{"type": "bearer", "token": "${T}"}, "headers": map[string]any{"X": "1"}, "timeout": int64(60), "sse_timeout": int64(300)}, ""},
		{"sse ok", map[string]any{"type": "sse", "url": "http://127.0.0.1:1/sse"}, ""},
		{"http missing url", map[string]any{"type": "http"}, "HTTP configuration requires 'url' field"},
		{"http ftp url", map[string]any{"type": "http", "url": "ftp://x"}, "URL must start with http:// or https://"},
		{"http empty url", map[string]any{"type": "http", "url": ""}, "URL must be a non-empty string"},
		{"bearer without token", map[string]any{"type": "http", "url": "https://h", "auth": map[string]any{"type": "bearer"}}, "Bearer auth requires a 'token' field, or 'token_env'"},
		{"api_key without key", map[string]any{"type": "http", "url": "https://h", "auth": map[string]any{"type": "api_key"}}, "API key auth requires a 'key' field, or 'key_env'"},
		{"basic without username", map[string]any{"type": "http", "url": "https://h", "auth": map[string]any{"type": "basic", "password": "p"}}, "Basic auth requires 'username' field"},
		{"basic without password", map[string]any{"type": "http", "url": "https://h", "auth": map[string]any{"type": "basic", "username": "u"}}, "Basic auth requires 'password' field"},
		{"oauth", map[string]any{"type": "http", "url": "https://h", "auth": map[string]any{"type": "oauth"}}, "Unsupported auth type: oauth. Supported: 'bearer', 'api_key', 'basic'"},
		{"auth no type", map[string]any{"type": "http", "url": "https://h", "auth": map[string]any{}}, "Auth config must specify 'type'"},
		{"auth not dict", map[string]any{"type": "http", "url": "https://h", "auth": "x"}, "Auth config must be a dictionary"},
		{"headers not dict", map[string]any{"type": "http", "url": "https://h", "headers": "x"}, "Headers must be a dictionary"},
		{"timeout negative", map[string]any{"type": "http", "url": "https://h", "timeout": int64(-1)}, "Timeout must be a positive number"},
		{"timeout too big", map[string]any{"type": "http", "url": "https://h", "timeout": int64(700)}, "Timeout cannot exceed 600 seconds (10 minutes)"},
		{"sse_timeout zero", map[string]any{"type": "http", "url": "https://h", "sse_timeout": int64(0)}, "SSE timeout must be a positive number"},
		{"unknown transport", map[string]any{"type": "websocket", "url": "ws://h"}, "Unsupported transport type: websocket. Supported: 'stdio' (default), 'http', 'sse'"},
		{"stdio timeout too big", map[string]any{"command": "x", "timeout": 601.0}, "Timeout cannot exceed 600 seconds"},
		{"memory negative", map[string]any{"command": "x", "max_memory_mb": int64(-5)}, "max_memory_mb must be a positive number"},
		{"response limit ok", map[string]any{"command": "x", "max_response_mb": int64(256)}, ""},
		{"response limit zero", map[string]any{"command": "x", "max_response_mb": int64(0)}, "max_response_mb must be a positive number"},
		{"response limit too big", map[string]any{"command": "x", "max_response_mb": 2048.0}, "max_response_mb cannot exceed 1024 (1 GB)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := ValidateEntry("srv", c.cfg)
			if c.want == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "'srv'") {
				t.Fatalf("error = %v, want it to name the server and contain %q", err, c.want)
			}
		})
	}
}

// An HTTP server is accepted only as type http/sse; any other transport is
// rejected with the text of docs/decisions.md, "Transports".
func TestCriterion02UnsupportedTransportRejected(t *testing.T) {
	_, err := ParseSource(`{"x": {"type": "websocket", "url": "ws://127.0.0.1:1"}}`)
	if err == nil || !strings.Contains(err.Error(), "Unsupported transport type: websocket") {
		t.Fatalf("err = %v", err)
	}
	// The legacy "transport" key is accepted and rewritten as "type".
	s, err := ParseSource(`{"servers": {"gh": {"transport": "stdio", "command": "npx"}}}`)
	if err != nil {
		t.Fatal(err)
	}
	if _, has := s.Servers[0].Config["transport"]; has {
		t.Fatal("transport key kept")
	}
}

func TestNormalizeServerName(t *testing.T) {
	ok := map[string]string{"github": "github", "GitHub": "github", "brave_search": "brave-search", "My Server": "my-server", "a.b": "a-b", "x__y": "x-y"}
	for in, want := range ok {
		got, err := NormalizeServerName(in)
		if err != nil || got != want {
			t.Errorf("NormalizeServerName(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", " ", "\t", "../x", "..", ".", "/abs", `\win`, "a/../b", "a:b", "a|b", "a;b", "a&b", "a$b", "a\nb", "a\x00b", "---"} {
		if _, err := NormalizeServerName(bad); err == nil || !strings.Contains(err.Error(), "Invalid server name") {
			t.Errorf("NormalizeServerName(%q) err = %v, want Invalid server name", bad, err)
		}
	}
}

func TestParseSourceShapes(t *testing.T) {
	dir := t.TempDir()
	claudeDesktop := filepath.Join(dir, "claude_desktop_config.json")
	os.WriteFile(claudeDesktop, []byte(`{"globalShortcut":"Ctrl+Space","mcpServers":{"brave_search":{"command":"npx","args":["-y","@modelcontextprotocol/server-brave-search"],"env":{"BRAVE_API_KEY":"${BRAVE_API_KEY}"}}}}`), 0o644)
	cursor := filepath.Join(dir, "mcp.json")
	os.WriteFile(cursor, []byte(`{"mcpServers":{"remote":{"url":"https://example.com/mcp","headers":{"Authorization":"Bearer ${T}"}},"local":{"command":"node","args":["s.js"]}}}`), 0o644)
	claudeCode := filepath.Join(dir, ".mcp.json")
	os.WriteFile(claudeCode, []byte(`{"mcpServers":{"fs":{"type":"stdio","command":"npx","args":["x"],"env":{}},"api":{"type":"sse","url":"http://127.0.0.1:9/sse"}}}`), 0o644)

	cases := []struct {
		src   string
		names []string
		check func(t *testing.T, s *Source)
	}{
		{`{"mcpServers": {"github": {"command": "npx"}}}`, []string{"github"}, nil},
		{`{"github": {"command": "npx"}, "slack": {"type": "http", "url": "https://h/mcp"}}`, []string{"github", "slack"}, nil},
		{`  {"one": {"command": "x"}}  `, []string{"one"}, nil},
		{claudeDesktop, []string{"brave-search"}, func(t *testing.T, s *Source) {
			if s.Label != "claude_desktop_config.json" || len(s.Notes) == 0 || !strings.Contains(strings.Join(s.Notes, "\n"), "renamed to 'brave-search'") {
				t.Fatalf("label %q notes %v", s.Label, s.Notes)
			}
			if s.Servers[0].Config["env"].(map[string]any)["BRAVE_API_KEY"] != "${BRAVE_API_KEY}" {
				t.Fatal("env reference must be stored unexpanded")
			}
		}},
		{cursor, []string{"local", "remote"}, func(t *testing.T, s *Source) {
			if DecodeConfig(s.Servers[1].Config).Transport != "http" {
				t.Fatalf("cursor url-only entry should become http: %v", s.Servers[1].Config)
			}
		}},
		{claudeCode, []string{"api", "fs"}, func(t *testing.T, s *Source) {
			if _, has := s.Servers[1].Config["type"]; has {
				t.Fatal("explicit stdio type should be dropped")
			}
			if DecodeConfig(s.Servers[0].Config).Transport != "sse" {
				t.Fatal("sse kept")
			}
		}},
	}
	for _, c := range cases {
		s, err := ParseSource(c.src)
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		var names []string
		for _, x := range s.Servers {
			names = append(names, x.Name)
		}
		if strings.Join(names, ",") != strings.Join(c.names, ",") {
			t.Fatalf("%s: names %v want %v", c.src, names, c.names)
		}
		if c.check != nil {
			c.check(t, s)
		}
	}

	s, err := ParseSource(`{"a": {"type": "http", "url": "http://api.example.com/mcp"}, "b": {"type": "http", "url": "http://127.0.0.1:8080/mcp"}}`)
	if err != nil || len(s.Notes) != 1 || !strings.Contains(s.Notes[0], "server 'a' uses plain http://") {
		t.Fatalf("notes %v err %v", s, err)
	}

	s, err = ParseSource(`{"a": {"command": "x", "cwd": "/tmp", "disabled": true, "alwaysAllow": ["x"]}}`)
	if err != nil || len(s.Notes) != 2 || !strings.Contains(s.Notes[0], "server 'a' is disabled (\"disabled\": true): kept, but not synced or started") ||
		!strings.Contains(s.Notes[1], "key 'alwaysAllow' is kept in the config but not used by pflow") {
		t.Fatalf("notes %v err %v", s, err)
	}

	claudeJSON := filepath.Join(dir, ".claude.json")
	os.WriteFile(claudeJSON, []byte(`{"numStartups": 3, "mcpServers": {"user-srv": {"type": "stdio", "command": "a"}}, "projects": {"/home/me/app": {"mcpServers": {"app-db": {"command": "b", "args": ["x"]}}}, "/home/me/other": {"allowedTools": []}}}`), 0o644)
	s, err = ParseSource(claudeJSON)
	if err != nil || len(s.Servers) != 2 || s.Servers[0].Name != "app-db" || !strings.Contains(strings.Join(s.Notes, "\n"), "server 'app-db' comes from project /home/me/app") {
		t.Fatalf("claude code: %+v %v", s, err)
	}

	errs := map[string]string{
		`{not json`:                        "Invalid JSON",
		`{"a": {"invalid": 1}}`:            "Invalid JSON format. Expected one of:",
		`[1,2]`:                            "Invalid JSON format",
		filepath.Join(dir, "missing.json"): "File not found:",
		`{"A_b": {"command": "x"}, "a-b": {"command": "y"}}`: "both become 'a-b'",
		`{"../etc": {"command": "x"}}`:                       "Invalid server name",
		`{"mcpServers": {"x": {"type": "http"}}}`:            "HTTP configuration requires 'url' field",
	}
	for src, want := range errs {
		if _, err := ParseSource(src); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseSource(%q) err = %v, want %q", src, err, want)
		}
	}
}

// Configuring a stdio server with a valid command
// saves it to the config (0600, mcpServers format, secrets unexpanded).
func TestCriterion01ConfigureStdioServerSaved(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcp-servers.json")
	s, err := ParseSource(`{"github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}}}`)
	if err != nil {
		t.Fatal(err)
	}
	err = Update(context.Background(), path, func(f *File) error {
		for _, x := range s.Servers {
			f.Servers[x.Name] = x.Config
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(path)
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", st.Mode().Perm())
	}
	data, _ := os.ReadFile(path)
	var doc map[string]map[string]map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if doc["mcpServers"]["github"]["command"] != "npx" || !strings.Contains(string(data), "${GITHUB_TOKEN}") {
		t.Fatalf("file = %s", data)
	}
	f, err := LoadFile(path)
	if err != nil || len(f.Servers) != 1 {
		t.Fatalf("reload: %v %v", f, err)
	}
}

func TestConcurrentUpdatesLoseNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcp-servers.json")
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			name := "s" + string(rune('a'+i))
			if err := Update(context.Background(), path, func(f *File) error {
				f.Servers[name] = map[string]any{"command": "x"}
				return nil
			}); err != nil {
				t.Error(err)
			}
		}(i)
	}
	wg.Wait()
	f, err := LoadFile(path)
	if err != nil || len(f.Servers) != 20 {
		t.Fatalf("servers %d err %v", len(f.Servers), err)
	}
}

func TestLoadFileCorrupt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcp-servers.json")
	os.WriteFile(path, []byte("{broken"), 0o600)
	if _, err := LoadFile(path); err == nil || !strings.Contains(err.Error(), "Invalid JSON in MCP server configuration file") {
		t.Fatalf("err = %v", err)
	}
}

// The longest configured server name wins (see docs/decisions.md, "Names of
// servers and tools").
func TestCriterion15ParseNodeType(t *testing.T) {
	servers := []string{"github", "slack", "slack-composio"}
	cases := []struct{ in, server, tool string }{
		{"mcp-github-create-issue", "github", "create-issue"},
		{"mcp-slack-composio-send-message", "slack-composio", "send-message"},
		{"mcp-slack-send-message", "slack", "send-message"},
		{"mcp-github-list_repositories", "github", "list_repositories"},
	}
	for _, c := range cases {
		s, tool, err := ParseNodeType(c.in, servers)
		if err != nil || s != c.server || tool != c.tool {
			t.Errorf("ParseNodeType(%q) = %q %q %v", c.in, s, tool, err)
		}
	}
	if _, _, err := ParseNodeType("mcp-jira-x", servers); err == nil || !strings.Contains(err.Error(), "Server jira not configured") {
		t.Errorf("err = %v", err)
	}
	if _, _, err := ParseNodeType("mcp-", servers); err == nil {
		t.Error("mcp- accepted")
	}
}

// Tool names with spaces are sanitised.
func TestCriterion10ToolNameSanitized(t *testing.T) {
	cases := map[string]string{"create issue": "create-issue", "SLACK_SEND_MESSAGE": "slack-send-message", "a  b..c": "a-b-c", "get-sum": "get-sum", "read_file": "read-file"}
	for in, want := range cases {
		if got := SanitizeToolName(in); got != want {
			t.Errorf("SanitizeToolName(%q) = %q want %q", in, got, want)
		}
	}
	if NodeType("slack", "SLACK_SEND_MESSAGE") != "mcp-slack-slack-send-message" {
		t.Error("NodeType")
	}
}

// The short form (server name → entry, without the mcpServers wrapper)
// is read like the full one for every transport, a Unix socket's entry
// (only a type and a path) included; a wrong entry in it gets the entry's
// own message, not the format's.
func TestParseSourceShortFormEveryTransport(t *testing.T) {
	for _, entry := range []string{
		`{"command": "npx", "args": ["-y", "pkg"]}`,
		`{"type": "stdio", "command": "npx"}`,
		`{"type": "http", "url": "https://mcp.example.com/mcp"}`,
		`{"type": "sse", "url": "https://mcp.example.com/sse"}`,
		`{"type": "uds", "path": "/tmp/s.sock"}`,
		`{"transport": "uds", "path": "/tmp/s.sock"}`,
	} {
		short, err := ParseSource(`{"x": ` + entry + `}`)
		if err != nil {
			t.Errorf("short form %s: %v", entry, err)
			continue
		}
		full, err := ParseSource(`{"mcpServers": {"x": ` + entry + `}}`)
		if err != nil {
			t.Fatalf("full form %s: %v", entry, err)
		}
		a, _ := json.Marshal(short.Servers)
		b, _ := json.Marshal(full.Servers)
		if string(a) != string(b) {
			t.Errorf("short form %s read as %s, the full form as %s", entry, a, b)
		}
	}
	if _, err := ParseSource(`{"x": {"type": "uds"}}`); err == nil || !strings.Contains(err.Error(), "Server 'x'") {
		t.Errorf("a uds entry without its path: %v", err)
	}
}
