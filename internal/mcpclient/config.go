// Package mcpclient is pflow's MCP client: the mcp-servers.json config (load,
// add, remove, validation, name normalisation), ${VAR} expansion, and
// sessions with MCP servers over stdio, streamable HTTP and legacy SSE, with
// the process lifecycle, timeouts and error texts that docs/decisions.md
// describes from "Transports" to "Result extraction".
package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/pflow-go/pflow/internal/fsutil"
	"github.com/pflow-go/pflow/internal/pferr"
	"github.com/pflow-go/pflow/internal/value"
)

// Defaults (see docs/decisions.md, "Timeouts and memory limits").
//
// DefaultMaxMemoryMB is 512, not the 100 first asked for: the limit is watched
// on the
// RSS of the server's whole process group, and a reference server started
// the usual way needs more in normal use — measured on the test peers:
// server-everything, -filesystem and -memory alone 68 MB each under node 20,
// but 151 MB when started with "npx" (npx stays resident as the parent), and
// a first "npx -y" also runs npm's installer in the group. 512 MB leaves room
// for real work and still stops a runaway server.
//
// DefaultMaxResponseMB bounds one message from a stdio server (a tool's
// whole result): 64 MB passes the 50 MB results of the reliability suite and
// keeps a runaway server from exhausting pflow's memory. MaxResponseMB is
// the most a server's "max_response_mb" may raise it to.
const (
	DefaultCallTimeout = 30 * time.Second
	// DefaultStartupTimeout fits a first `npx -y` download of a server on
	// a normal connection.
	DefaultStartupTimeout = 60 * time.Second
	DefaultMaxMemoryMB    = 512
	DefaultMaxResponseMB  = 64
	MaxResponseMB         = 1024
	MaxTimeoutSeconds     = 600
)

// File is the content of mcp-servers.json. Server entries are kept as raw
// maps so keys pflow does not know are preserved verbatim.
type File struct {
	Servers map[string]map[string]any
}

// Names returns the configured server names, sorted.
func (f *File) Names() []string { return value.SortedKeys(f.Servers) }

// LoadFile reads mcp-servers.json. A missing file is an empty config.
func LoadFile(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &File{Servers: map[string]map[string]any{}}, nil
	}
	if err != nil {
		return nil, pferr.Newf(pferr.Config, "Cannot read MCP server configuration %s: %v", path, err)
	}
	return parseFile(path, data)
}

// LoadFileShared is LoadFile for readers that do not modify the File: while
// mcp-servers.json is unchanged, a long-lived process (pflow mcp serve),
// which reads it several times per run, decodes it once. The File is
// shared: it must not be modified.
func LoadFileShared(path string) (*File, error) {
	f, err := sharedFiles.Load(path, func(data []byte) (*File, error) { return parseFile(path, data) })
	var pe *pferr.Error
	if err == nil || errors.As(err, &pe) { // parseFile's errors are *pferr.Error
		return f, err
	}
	return LoadFile(path) // missing or unreadable: as LoadFile says
}

var sharedFiles fsutil.Memo[*File]

func parseFile(path string, data []byte) (*File, error) {
	f := &File{Servers: map[string]map[string]any{}}
	if len(strings.TrimSpace(string(data))) == 0 {
		return f, nil
	}
	v, err := value.DecodeJSON(data)
	if err != nil {
		return nil, pferr.Newf(pferr.Config, "Invalid JSON in MCP server configuration file %s: %v", path, err).
			WithFix(pferr.Fix{Text: "Fix the JSON by hand, or move the file away and re-add your servers: {do}.", Do: pferr.PersonOnly("mcp add <config>")})
	}
	root, ok := v.(map[string]any)
	if !ok {
		return nil, pferr.Newf(pferr.Config, "Invalid MCP server configuration file %s: expected a JSON object with an 'mcpServers' key", path)
	}
	raw, ok := root["mcpServers"]
	if !ok || raw == nil {
		return f, nil
	}
	servers, ok := raw.(map[string]any)
	if !ok {
		return nil, pferr.Newf(pferr.Config, "Invalid MCP server configuration file %s: 'mcpServers' must be an object", path)
	}
	for name, s := range servers {
		m, ok := s.(map[string]any)
		if !ok {
			return nil, pferr.Newf(pferr.Config, "Invalid MCP server configuration file %s: server '%s' must be an object", path, name)
		}
		f.Servers[name] = m
	}
	return f, nil
}

// Marshal renders the file in the mcpServers format (indent 2, sorted keys,
// trailing newline).
func (f *File) Marshal() ([]byte, error) {
	servers := map[string]any{}
	for k, v := range f.Servers {
		servers[k] = v
	}
	b, err := json.MarshalIndent(map[string]any{"mcpServers": servers}, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Update runs a locked read-modify-write of mcp-servers.json; fn's error
// aborts without writing. The file is written atomically with mode 0600.
func Update(ctx context.Context, path string, fn func(f *File) error) error {
	lock, err := fsutil.LockFile(ctx, path, 30*time.Second)
	if err != nil {
		return pferr.Wrap(err, pferr.Config, "")
	}
	defer lock.Unlock()
	f, err := LoadFile(path)
	if err != nil {
		return err
	}
	if err := fn(f); err != nil {
		return err
	}
	data, err := f.Marshal()
	if err != nil {
		return err
	}
	if err := fsutil.WriteFileAtomic(path, data, 0o600); err != nil {
		return pferr.Wrap(err, pferr.Config, "Cannot write MCP server configuration")
	}
	return nil
}

// ---- names (see docs/decisions.md, "Names of servers and tools") ----

var serverNameRe = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// ValidServerName reports whether name is a valid (normalised) server name.
func ValidServerName(name string) bool { return serverNameRe.MatchString(name) }

// NormalizeServerName turns an imported name such as "brave_search" or
// "GitHub" into a valid one ("brave-search", "github"). Names that could
// never be safe (path separators, "..", control or shell characters,
// blank) are refused.
func NormalizeServerName(name string) (string, error) {
	bad := func() error {
		return pferr.Newf(pferr.Validation, "Invalid server name: %q. Use lowercase letters, digits and hyphens only (e.g. 'my-server').", name)
	}
	if strings.TrimSpace(name) == "" || name == "." || strings.Contains(name, "..") {
		return "", bad()
	}
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case r >= 'A' && r <= 'Z':
			b.WriteRune(r + ('a' - 'A'))
		case r == '-' || r == '_' || r == '.' || r == ' ':
			b.WriteByte('-')
		default:
			return "", bad()
		}
	}
	out := collapseDashes(b.String())
	if out == "" {
		return "", bad()
	}
	return out, nil
}

func collapseDashes(s string) string {
	for strings.Contains(s, "--") {
		s = strings.ReplaceAll(s, "--", "-")
	}
	return strings.Trim(s, "-")
}

// SanitizeToolName maps a tool name to the [a-z0-9-] form used in node ids
// (see docs/decisions.md, "Names of servers and tools"): SLACK_SEND_MESSAGE →
// slack-send-message, spaces → '-'.
func SanitizeToolName(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	return collapseDashes(b.String())
}

// NodeType returns the node type for a server's tool.
func NodeType(server, tool string) string { return "mcp-" + server + "-" + SanitizeToolName(tool) }

// ParseNodeType splits "mcp-<server>-<tool>" using the longest configured
// server name that prefixes it (see
// docs/decisions.md, "Names of servers and tools").
func ParseNodeType(nodeType string, servers []string) (server, tool string, err error) {
	if !strings.HasPrefix(nodeType, "mcp-") || len(nodeType) <= 4 {
		return "", "", pferr.Newf(pferr.Validation, "Invalid MCP node type format: %s", nodeType).
			WithHint("MCP node types must be in format: mcp-<server>-<tool>")
	}
	rest := nodeType[4:]
	best := ""
	for _, s := range servers {
		if strings.HasPrefix(rest, s+"-") && len(s) > len(best) {
			best = s
		}
	}
	if best == "" {
		sorted := append([]string(nil), servers...)
		sort.Strings(sorted)
		avail := strings.Join(sorted, ", ")
		if avail == "" {
			avail = "none"
		}
		first, _, _ := strings.Cut(rest, "-")
		return "", "", pferr.Newf(pferr.NotFound, "Server %s not configured", first).
			WithHint(fmt.Sprintf("No configured MCP server matches node type '%s'. Configured servers: %s.", nodeType, avail)).
			WithFix(pferr.Fix{Text: "To add it, {do}.", Do: pferr.PersonOnly("mcp add <config>")}).
			WithFix(pferr.Fix{Text: "Then {do}.", Do: pferr.SyncServer(first)})
	}
	tool = rest[len(best)+1:]
	if tool == "" {
		return "", "", pferr.Newf(pferr.Validation, "Invalid MCP node type: %s - no tool name after server '%s'", nodeType, best).
			WithHint(fmt.Sprintf("Format should be: mcp-%s-<tool-name>", best))
	}
	return best, tool, nil
}

// ---- validation (as in the Python pflow) ----

func verr(format string, args ...any) error {
	return pferr.Newf(pferr.Validation, format, args...)
}

// transport returns the entry's transport: "stdio", "http", "sse" or
// "uds" (Config.Transport once decoded).
func transport(cfg map[string]any) string {
	t, _ := cfg["type"].(string)
	if t == "" {
		return "stdio"
	}
	return t
}

// NormalizeEntry rewrites a legacy "transport" key as "type", infers
// "http" for an entry that only has a url (Cursor's format), and drops an
// explicit "stdio" type. It returns notes describing what changed.
func NormalizeEntry(name string, cfg map[string]any) (map[string]any, []string) {
	out := make(map[string]any, len(cfg))
	for k, v := range cfg {
		out[k] = v
	}
	var notes []string
	if t, ok := out["transport"]; ok {
		if _, has := out["type"]; !has || out["type"] == nil {
			out["type"] = t
		}
		delete(out, "transport")
	}
	if out["type"] == nil {
		delete(out, "type")
		if _, hasURL := out["url"]; hasURL {
			if _, hasCmd := out["command"]; !hasCmd {
				out["type"] = "http"
				notes = append(notes, fmt.Sprintf("server '%s' has a url and no type: using streamable HTTP (set \"type\": \"sse\" for a legacy SSE server)", name))
			}
		}
	}
	if t, _ := out["type"].(string); t == "stdio" {
		delete(out, "type")
	}
	if t, _ := out["type"].(string); t == "streamable-http" || t == "streamableHttp" {
		out["type"] = "http"
	}
	return out, notes
}

// ValidateEntry checks one (normalised, unexpanded) server entry. Messages
// follow the Python pflow's texts.
func ValidateEntry(name string, cfg map[string]any) error {
	if !ValidServerName(name) {
		return verr("Invalid server name: %q. Use lowercase letters, digits and hyphens only (e.g. 'my-server').", name)
	}
	wrap := func(err error) error {
		if err == nil {
			return nil
		}
		return verr("Server '%s': %s", name, pferr.As(err).Message)
	}
	if t, ok := cfg["type"]; ok && t != nil {
		if _, isStr := t.(string); !isStr {
			return wrap(verr("Unsupported transport type: %s. Supported: 'stdio' (default), 'http', 'sse', 'uds'", value.Stringify(t)))
		}
	}
	switch tr := transport(cfg); tr {
	case "stdio":
		c, ok := cfg["command"]
		if !ok {
			return wrap(verr("stdio configuration requires 'command' field"))
		}
		if s, isStr := c.(string); !isStr || strings.TrimSpace(s) == "" {
			return wrap(verr("Command cannot be empty"))
		}
		if c, ok := cfg["cwd"]; ok && c != nil {
			if s, isStr := c.(string); !isStr || strings.TrimSpace(s) == "" {
				return wrap(verr("cwd must be a non-empty directory path"))
			}
		}
		if a, ok := cfg["args"]; ok && a != nil {
			list, isList := a.([]any)
			if !isList {
				return wrap(verr("Arguments must be a list"))
			}
			for _, x := range list {
				switch x.(type) {
				case string, int64, float64, bool:
				default:
					return wrap(verr("Arguments must be a list of strings"))
				}
			}
		}
	case "uds":
		// Newline-delimited JSON-RPC over a Unix socket.
		v, ok := cfg["path"]
		if !ok {
			return wrap(verr("uds configuration requires 'path' field (the Unix socket the server listens on)"))
		}
		if s, isStr := v.(string); !isStr || strings.TrimSpace(s) == "" {
			return wrap(verr("path must be the non-empty path of a Unix socket"))
		}
	case "http", "sse":
		u, ok := cfg["url"]
		if !ok {
			return wrap(verr("HTTP configuration requires 'url' field"))
		}
		s, isStr := u.(string)
		if !isStr || strings.TrimSpace(s) == "" {
			return wrap(verr("URL must be a non-empty string"))
		}
		if !strings.HasPrefix(s, "http://") && !strings.HasPrefix(s, "https://") && !strings.HasPrefix(s, "${") {
			return wrap(verr("URL must start with http:// or https://"))
		}
		if a, ok := cfg["auth"]; ok && a != nil {
			if err := validateAuth(a); err != nil {
				return wrap(err)
			}
		}
		if h, ok := cfg["headers"]; ok && h != nil {
			if _, isMap := h.(map[string]any); !isMap {
				return wrap(verr("Headers must be a dictionary"))
			}
		}
		if o, ok := cfg["oauth"]; ok && o != nil {
			m, isMap := o.(map[string]any)
			if !isMap {
				return wrap(verr("oauth must be an object: {\"client_id\": ..., \"client_secret\": ..., \"scopes\": [...]} (all optional)"))
			}
			for k, v := range m {
				switch k {
				case "client_id", "client_secret":
					if _, isStr := v.(string); !isStr {
						return wrap(verr("oauth.%s must be a string", k))
					}
				case "scopes":
					l, isList := v.([]any)
					if !isList {
						return wrap(verr("oauth.scopes must be a list of scope names"))
					}
					for _, s := range l {
						if _, isStr := s.(string); !isStr {
							return wrap(verr("oauth.scopes must be a list of scope names"))
						}
					}
				default:
					return wrap(verr("oauth: unknown key %q (client_id, client_secret, scopes)", k))
				}
			}
		}
		if v, ok := cfg["sse_timeout"]; ok && v != nil {
			if f, isNum := number(v); !isNum || f <= 0 {
				return wrap(verr("SSE timeout must be a positive number"))
			}
		}
		if err := validatePinKeys(cfg); err != nil {
			return wrap(err)
		}
	default:
		return wrap(verr("Unsupported transport type: %s. Supported: 'stdio' (default), 'http', 'sse', 'uds'", tr))
	}
	if v, ok := cfg["timeout"]; ok && v != nil {
		f, isNum := number(v)
		if !isNum || f <= 0 {
			return wrap(verr("Timeout must be a positive number"))
		}
		if f > MaxTimeoutSeconds {
			return wrap(verr("Timeout cannot exceed 600 seconds (10 minutes)"))
		}
	}
	if v, ok := cfg["startup_timeout"]; ok && v != nil {
		f, isNum := number(v)
		if !isNum || f <= 0 {
			return wrap(verr("Startup timeout must be a positive number of seconds"))
		}
		if f > MaxTimeoutSeconds {
			return wrap(verr("Startup timeout cannot exceed 600 seconds (10 minutes)"))
		}
	}
	if v, ok := cfg["max_timeout"]; ok && v != nil {
		f, isNum := number(v)
		if !isNum || f <= 0 {
			return wrap(verr("max_timeout must be a positive number of seconds (the most a call reporting progress may take)"))
		}
		if f > 24*3600 {
			return wrap(verr("max_timeout cannot exceed 86400 seconds (a day)"))
		}
	}
	if v, ok := cfg["trust_readonly"]; ok && v != nil {
		if _, isBool := v.(bool); !isBool {
			return wrap(verr("trust_readonly must be true or false (true: act on the server's read-only and idempotent tool annotations: cache its read-only tools)"))
		}
	}
	if v, ok := cfg["sampling"]; ok && v != nil {
		if _, isBool := v.(bool); !isBool {
			return wrap(verr("sampling must be true or false (true: the server may ask pflow's configured LLM for completions)"))
		}
	}
	if v, ok := cfg["keep_alive"]; ok && v != nil {
		if _, isBool := v.(bool); !isBool {
			return wrap(verr("keep_alive must be true or false (false: a long-lived pflow, such as pflow mcp serve, starts the server afresh for every run)"))
		}
	}
	if v, ok := cfg["max_memory_mb"]; ok && v != nil {
		if f, isNum := number(v); !isNum || f <= 0 {
			return wrap(verr("max_memory_mb must be a positive number of megabytes"))
		}
	}
	if v, ok := cfg["max_response_mb"]; ok && v != nil {
		if f, isNum := number(v); !isNum || f <= 0 {
			return wrap(verr("max_response_mb must be a positive number of megabytes"))
		} else if f > MaxResponseMB {
			return wrap(verr("max_response_mb cannot exceed %d (1 GB)", MaxResponseMB))
		}
	}
	if e, ok := cfg["env"]; ok && e != nil {
		m, isMap := e.(map[string]any)
		if !isMap {
			return wrap(verr("Environment variables must be a dictionary"))
		}
		for k, v := range m {
			switch v.(type) {
			case string, int64, float64, bool:
			default:
				return wrap(verr("Environment variable %s must be a string", k))
			}
		}
	}
	return nil
}

func validateAuth(a any) error {
	m, ok := a.(map[string]any)
	if !ok {
		return verr("Auth config must be a dictionary")
	}
	t, ok := m["type"]
	if !ok || t == nil {
		return verr("Auth config must specify 'type'")
	}
	switch t {
	case "bearer":
		if _, ok := m["token"]; !ok {
			if _, ok := m["token_env"]; !ok {
				return verr("Bearer auth requires a 'token' field, or 'token_env' naming the environment variable that holds it")
			}
		}
	case "api_key":
		if _, ok := m["key"]; !ok {
			if _, ok := m["key_env"]; !ok {
				return verr("API key auth requires a 'key' field, or 'key_env' naming the environment variable that holds it")
			}
		}
	case "basic":
		if _, ok := m["username"]; !ok {
			return verr("Basic auth requires 'username' field")
		}
		if _, ok := m["password"]; !ok {
			return verr("Basic auth requires 'password' field")
		}
	default:
		return verr("Unsupported auth type: %s. Supported: 'bearer', 'api_key', 'basic'", value.Stringify(t))
	}
	return nil
}

// validatePinKeys checks the shape of "pin_sha256" and "pin_file" in an
// unexpanded entry (ValidateEntry); a value with a ${VAR} is checked once
// it is expanded (loadPins).
func validatePinKeys(cfg map[string]any) error {
	if v, ok := cfg["pin_sha256"]; ok && v != nil {
		vals, isPins := pinValues(v)
		if !isPins {
			return verr("pin_sha256 must be a pin (\"sha256//<base64>\") or a list of them")
		}
		for _, s := range vals {
			if strings.Contains(s, "${") {
				continue
			}
			if _, err := parsePins(s); err != nil {
				return verr("pin_sha256: %v", err)
			}
		}
	}
	if v, ok := cfg["pin_file"]; ok && v != nil {
		if s, isStr := v.(string); !isStr || strings.TrimSpace(s) == "" {
			return verr("pin_file must be the path of a file of pins, one \"sha256//<base64>\" a line")
		}
	}
	return nil
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return 0, false
		}
		return x, true
	}
	return 0, false
}
