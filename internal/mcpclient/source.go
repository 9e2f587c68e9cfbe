package mcpclient

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/pflow-go/pflow/internal/pferr"
	"github.com/pflow-go/pflow/internal/value"
)

// Imported is one server read from an add source.
type Imported struct {
	Name     string         // normalised name
	Original string         // name as written in the source
	Config   map[string]any // normalised entry (type/transport rewritten)
}

// Source is the result of parsing one 'pflow mcp add' argument.
type Source struct {
	Label   string // "JSON input" or the file's base name
	Servers []Imported
	Notes   []string // renamed servers, inferred transports
}

const invalidShape = "Invalid JSON format. Expected one of:\n" +
	"  {\"mcpServers\": {\"name\": {...}}}  - Full MCP format\n" +
	"  {\"name\": {\"command\": \"...\", ...}}  - Direct server config (stdio)\n" +
	"  {\"name\": {\"type\": \"http\", \"url\": \"...\"}}  - Direct server config (http, sse)\n" +
	"  {\"name\": {\"type\": \"uds\", \"path\": \"...\"}}  - Direct server config (uds)"

// IsJSONSource reports whether an add argument is inline JSON rather than a path.
func IsJSONSource(src string) bool {
	t := strings.TrimSpace(src)
	return strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[")
}

// ParseSource parses an add argument: inline JSON or a config file (pflow's
// own, Claude Desktop's claude_desktop_config.json, Claude Code's .mcp.json or
// ~/.claude.json, Cursor's mcp.json). Every entry is normalised and validated.
func ParseSource(src string) (*Source, error) {
	var data []byte
	s := &Source{Label: "JSON input"}
	where := ""
	if IsJSONSource(src) {
		data = []byte(src)
	} else {
		b, err := os.ReadFile(src)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, pferr.Newf(pferr.NotFound, "File not found: %s", src).
				WithHint("Pass a config file path or inline JSON such as '{\"name\": {\"command\": \"npx\", \"args\": [\"-y\", \"pkg\"]}}'.")
		}
		if err != nil {
			return nil, pferr.Newf(pferr.Config, "Cannot read %s: %v", src, err)
		}
		data = b
		s.Label = filepath.Base(src)
		where = src
	}
	v, err := value.DecodeJSON(data)
	if err != nil {
		e := pferr.Newf(pferr.Validation, "Invalid JSON: %v", err)
		if where != "" {
			e.Where = where
		}
		return nil, e
	}
	root, ok := v.(map[string]any)
	if !ok {
		return nil, pferr.New(pferr.Validation, invalidShape).WithWhere(where)
	}
	var entries map[string]any
	if projects, ok := root["projects"].(map[string]any); ok {
		// Claude Code's ~/.claude.json: user-scope servers at the top level,
		// project-scope servers under projects.<dir>.mcpServers.
		merged, notes, err := claudeCodeServers(root, projects)
		if err != nil {
			return nil, err.WithWhere(where)
		}
		if len(merged) > 0 {
			root = map[string]any{"mcpServers": merged}
			s.Notes = append(s.Notes, notes...)
		}
	}
	switch {
	case root["mcpServers"] != nil:
		m, ok := root["mcpServers"].(map[string]any)
		if !ok {
			return nil, pferr.New(pferr.Validation, "Invalid MCP config format: 'mcpServers' must be an object").WithWhere(where)
		}
		entries = m
	case root["servers"] != nil && isServerMap(root["servers"]):
		entries = root["servers"].(map[string]any)
	case len(root) > 0 && isServerMap(root):
		entries = root
	default:
		if _, has := root["mcpServers"]; has {
			entries = map[string]any{}
		} else {
			return nil, pferr.New(pferr.Validation, invalidShape).WithWhere(where)
		}
	}
	names := value.SortedKeys(entries)
	seen := map[string]string{}
	for _, orig := range names {
		cfg, ok := entries[orig].(map[string]any)
		if !ok {
			return nil, pferr.Newf(pferr.Validation, "Server '%s' must be an object", orig).WithWhere(where)
		}
		name, err := NormalizeServerName(orig)
		if err != nil {
			return nil, pferr.As(err).WithWhere(where)
		}
		if prev, dup := seen[name]; dup {
			return nil, pferr.Newf(pferr.Validation, "Server names '%s' and '%s' both become '%s'", prev, orig, name).
				WithWhere(where).WithHint("Rename one of them so the names differ after lowercasing and replacing '_', '.' and spaces with '-'.")
		}
		seen[name] = orig
		norm, notes := NormalizeEntry(name, cfg)
		s.Notes = append(s.Notes, notes...)
		if name != orig {
			s.Notes = append(s.Notes, fmt.Sprintf("server '%s' renamed to '%s' (server names use lowercase letters, digits and hyphens)", orig, name))
		}
		if err := ValidateEntry(name, norm); err != nil {
			return nil, pferr.As(err).WithWhere(where)
		}
		c := DecodeConfig(norm)
		if c.Disabled {
			s.Notes = append(s.Notes, fmt.Sprintf("server '%s' is disabled (\"disabled\": true): kept, but not synced or started", name))
		}
		for _, k := range value.SortedKeys(norm) {
			if !knownKeys[k] {
				s.Notes = append(s.Notes, fmt.Sprintf("server '%s': key '%s' is kept in the config but not used by pflow", name, k))
			}
		}
		if strings.HasPrefix(c.URL, "http://") && !isLocalURL(c.URL) {
			if !c.Insecure {
				s.Notes = append(s.Notes, fmt.Sprintf("server '%s' uses plain http:// to a remote host: pflow refuses to connect until its url is https:// or its entry says \"insecure\": true (pflow mcp add --insecure)", name))
			}
		}
		s.Servers = append(s.Servers, Imported{Name: name, Original: orig, Config: norm})
	}
	sort.Slice(s.Servers, func(i, j int) bool { return s.Servers[i].Name < s.Servers[j].Name })
	return s, nil
}

// isServerMap reports whether v maps server names to server entries: each
// an object with a command (stdio), a url (http, sse) or a transport type
// (a "uds" entry has only its socket path besides), so that the short form
// works for every transport; the entries are validated afterwards.
func isServerMap(v any) bool {
	m, ok := v.(map[string]any)
	if !ok || len(m) == 0 {
		return false
	}
	for _, e := range m {
		em, ok := e.(map[string]any)
		if !ok {
			return false
		}
		_, c := em["command"]
		_, u := em["url"]
		t, _ := em["type"].(string)
		tr, _ := em["transport"].(string)
		if !c && !u && t == "" && tr == "" {
			return false
		}
	}
	return true
}

func isLocalURL(u string) bool {
	parsed, err := url.Parse(u)
	if err != nil {
		return false
	}
	switch h := parsed.Hostname(); h {
	case "localhost", "127.0.0.1", "::1":
		return true
	default:
		return strings.HasSuffix(h, ".localhost") || strings.HasPrefix(h, "127.")
	}
}

// knownKeys are the entry keys pflow reads (docs/mcp.md, configuration
// reference); TestKnownKeysAreRead keeps it equal to the keys the code reads.
var knownKeys = map[string]bool{
	"type": true, "command": true, "args": true, "env": true, "cwd": true, "path": true,
	"url": true, "headers": true, "auth": true, "oauth": true,
	"timeout": true, "sse_timeout": true, "startup_timeout": true, "max_timeout": true, "max_memory_mb": true, "max_response_mb": true,
	"disabled": true, "insecure": true, "ca_file": true, "pin_sha256": true, "pin_file": true,
	"keep_alive": true, "sampling": true, "trust_readonly": true,
}

// claudeCodeServers merges the user-scope and project-scope servers of a
// Claude Code ~/.claude.json. The same name with different configs in two
// scopes is an error naming both.
func claudeCodeServers(root, projects map[string]any) (map[string]any, []string, *pferr.Error) {
	merged := map[string]any{}
	from := map[string]string{}
	var notes []string
	add := func(scope string, m map[string]any) *pferr.Error {
		for _, name := range value.SortedKeys(m) {
			cfg := m[name]
			if prev, dup := merged[name]; dup {
				a, _ := value.MarshalJSON(prev)
				b, _ := value.MarshalJSON(cfg)
				if string(a) != string(b) {
					return pferr.Newf(pferr.Validation, "Server '%s' is configured differently in %s and %s", name, from[name], scope).
						WithHint("Add one of them as inline JSON under a different name.")
				}
				continue
			}
			merged[name] = cfg
			from[name] = scope
			if scope != "the user scope" {
				notes = append(notes, fmt.Sprintf("server '%s' comes from %s", name, scope))
			}
		}
		return nil
	}
	if m, ok := root["mcpServers"].(map[string]any); ok {
		if err := add("the user scope", m); err != nil {
			return nil, nil, err
		}
	}
	for _, dir := range value.SortedKeys(projects) {
		p, _ := projects[dir].(map[string]any)
		if m, ok := p["mcpServers"].(map[string]any); ok {
			if err := add("project "+dir, m); err != nil {
				return nil, nil, err
			}
		}
	}
	return merged, notes, nil
}
