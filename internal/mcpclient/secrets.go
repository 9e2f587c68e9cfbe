package mcpclient

import (
	"io"
	"strings"

	"github.com/pflow-go/pflow/internal/redact"
	"github.com/pflow-go/pflow/internal/value"
)

// AddConfigSecrets registers with red the secrets of one mcp-servers.json
// entry, as written and with its ${VAR} references expanded through lookup:
// values of secret-looking env keys and headers, the auth token, key and
// password, the headers pflow builds from them (Authorization: Basic ...),
// literal secret args (--api-key=X, --token X, API_KEY=X), and the password
// and secret query parameters of every URL in url, args and env. A ${VAR}
// reference is no secret; the value it expands to is.
func AddConfigSecrets(red *redact.Redactor, name string, raw map[string]any, lookup func(string) (string, bool)) {
	if red == nil || raw == nil {
		return
	}
	raw, _ = NormalizeEntry(name, raw)
	addEntrySecrets(red, raw)
	e := &Expander{Lookup: lookup}
	cfg, ok := e.Expand(raw).(map[string]any)
	if !ok {
		return
	}
	addEntrySecrets(red, cfg)
	if Transport(cfg) != "stdio" {
		red.AddSecretsIn(BuildHeaders(name, cfg, io.Discard))
	}
}

// addEntrySecrets registers the secrets of one (raw or expanded) entry.
func addEntrySecrets(red *redact.Redactor, cfg map[string]any) {
	for _, section := range []string{"env", "headers"} {
		if m, ok := cfg[section].(map[string]any); ok {
			red.AddSecretsIn(m)
		}
	}
	if m, ok := cfg["oauth"].(map[string]any); ok {
		if s, ok := m["client_secret"].(string); ok {
			red.AddSecret("oauth client_secret", s)
		}
	}
	if m, ok := cfg["auth"].(map[string]any); ok {
		for _, k := range []string{"token", "key", "password"} {
			if s, ok := m[k].(string); ok {
				red.AddSecret("", s)
			}
		}
	}
	for _, k := range []string{"token", "apiKey", "api_key", "password"} {
		if s, ok := cfg[k].(string); ok {
			red.AddSecret("", s)
		}
	}
	for _, k := range []string{"url", "command", "cwd"} {
		if s, ok := cfg[k].(string); ok {
			red.AddSecretsIn(s)
		}
	}
	if list, ok := cfg["args"].([]any); ok {
		args := make([]string, len(list))
		for i, a := range list {
			args[i] = value.Stringify(a)
		}
		for _, s := range ArgSecrets(args) {
			red.AddSecret("", s)
		}
		red.AddSecretsIn(args)
	}
}

// ArgSecrets returns the literal secrets in a command line: the value of
// --name=X, -name=X and NAME=X, and the argument after --name, when name
// looks secret (redact.IsSecretKey: --api-key, --token, PASSWORD=...).
func ArgSecrets(args []string) []string {
	var out []string
	for i, a := range args {
		if k, v, ok := strings.Cut(a, "="); ok {
			if redact.IsSecretKey(strings.TrimLeft(k, "-")) {
				out = append(out, v)
			}
			continue
		}
		if strings.HasPrefix(a, "-") && redact.IsSecretKey(strings.TrimLeft(a, "-")) && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			out = append(out, args[i+1])
		}
	}
	return out
}
