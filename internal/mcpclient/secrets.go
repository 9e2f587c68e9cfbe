package mcpclient

import (
	"io"
	"strings"

	"github.com/pflow-go/pflow/internal/redact"
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
	addEntrySecrets(red, DecodeConfig(raw))
	e := &Expander{Lookup: lookup}
	cfg, ok := e.Expand(raw).(map[string]any)
	if !ok {
		return
	}
	c := DecodeConfig(cfg)
	addEntrySecrets(red, c)
	if c.Transport != "stdio" {
		red.AddSecretsIn(BuildHeaders(name, &c, io.Discard))
	}
}

// addEntrySecrets registers the secrets of one (raw or expanded) entry.
func addEntrySecrets(red *redact.Redactor, c Config) {
	red.AddSecretsIn(c.Env)
	red.AddSecretsIn(c.ConfigHeaders)
	if c.OAuthClientSecret != "" {
		red.AddSecret("oauth client_secret", c.OAuthClientSecret)
	}
	if c.Auth != nil {
		for _, s := range c.Auth.secrets() {
			red.AddSecret("", s)
		}
	}
	for _, s := range c.LooseSecrets {
		red.AddSecret("", s)
	}
	for _, s := range []string{c.URL, c.Command, c.Dir} {
		red.AddSecretsIn(s)
	}
	if c.Args != nil {
		for _, s := range ArgSecrets(c.Args) {
			red.AddSecret("", s)
		}
		red.AddSecretsIn(c.Args)
	}
}

// ArgSecrets returns the literal secrets in a command line: the value of
// --name=X, -name=X and NAME=X, and the argument after --name, when name
// looks secret (redact.IsSecretKey: --api-key, --token, PASSWORD=...).
func ArgSecrets(args []string) []string {
	var out []string
	eachArgSecret(args, func(_ int, _, v string) { out = append(out, v) })
	return out
}

// MaskArgs returns args with the secrets ArgSecrets finds replaced by
// mask(secret): --api-key=X becomes --api-key=mask(X), and the argument
// after --token becomes mask(it).
func MaskArgs(args []string, mask func(string) string) []string {
	out := append([]string(nil), args...)
	eachArgSecret(args, func(i int, prefix, v string) { out[i] = prefix + mask(v) })
	return out
}

// eachArgSecret calls f for each secret in args: its index, what precedes
// the secret in that argument ("--api-key=", or "" for the argument after
// --token) and the secret.
func eachArgSecret(args []string, f func(i int, prefix, secret string)) {
	for i, a := range args {
		if k, v, ok := strings.Cut(a, "="); ok {
			if redact.IsSecretKey(strings.TrimLeft(k, "-")) {
				f(i, k+"=", v)
			}
			continue
		}
		if strings.HasPrefix(a, "-") && redact.IsSecretKey(strings.TrimLeft(a, "-")) && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			f(i+1, "", args[i+1])
		}
	}
}
