package mcpclient

import (
	"io"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pflow-go/pflow/internal/value"
)

// decodeText decodes an entry written as JSON, as parseFile reads it
// (integers as int64).
func decodeText(t *testing.T, text string) map[string]any {
	t.Helper()
	v, err := value.DecodeJSON([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return v.(map[string]any)
}

// exported is c without its unexported bookkeeping (compared apart).
func exported(c Config) Config {
	c.raw, c.pinFileKey, c.authNotObject = nil, false, false
	if c.Auth != nil {
		a := *c.Auth
		a.raw, a.fromEnv = nil, nil
		c.Auth = &a
	}
	return c
}

// An entry with every key pflow reads decodes into the typed fields, each
// with its value (the keys of one transport and of the others: the
// decoder reads them all, whatever the type).
func TestDecodeConfigEveryField(t *testing.T) {
	pin := "sha256//" + strings.Repeat("A", 43) + "="
	raw := decodeText(t, `{
		"type": "http", "disabled": true,
		"command": "npx", "args": ["-y", "pkg", 3, true], "env": {"TOKEN": "t0k3n-secret", "N": 5}, "cwd": "/srv",
		"path": "/run/s.sock",
		"url": "https://mcp.example.com/mcp", "headers": {"X-Client": "pflow", "X-N": 1},
		"auth": {"type": "bearer", "token": "tok", "token_env": "TOK_VAR", "key": "k", "key_env": "KEY_VAR", "header": "X-Key", "username": "u", "password": "p"},
		"oauth": {"client_id": "cid", "client_secret": "csecret", "scopes": ["read", "write"]},
		"insecure": true, "ca_file": "/etc/ca.pem", "pin_sha256": ["`+pin+`", "a;b"], "pin_file": "/etc/pins",
		"timeout": 12, "startup_timeout": 1.5, "max_timeout": 900, "sse_timeout": 300,
		"max_memory_mb": 256, "max_response_mb": 2048,
		"trust_readonly": true, "sampling": true, "keep_alive": false,
		"token": "loose-token", "apiKey": "loose-key", "api_key": 7, "password": "loose-pass",
		"unknown": "kept"
	}`)
	got := DecodeConfig(raw)
	want := Config{
		Transport: "http", Disabled: true,
		Command: "npx", Args: []string{"-y", "pkg", "3", "true"}, Env: map[string]string{"TOKEN": "t0k3n-secret", "N": "5"}, Dir: "/srv",
		SocketPath:    "/run/s.sock",
		URL:           "https://mcp.example.com/mcp",
		ConfigHeaders: map[string]string{"X-Client": "pflow", "X-N": "1"},
		Auth: &AuthConfig{Type: "bearer", Token: "tok", TokenEnv: "TOK_VAR", Key: "k", KeyEnv: "KEY_VAR", Header: "X-Key",
			Username: "u", Password: "p"},
		OAuthClientID: "cid", OAuthClientSecret: "csecret", OAuthScopes: []string{"read", "write"},
		Insecure: true, CAFile: "/etc/ca.pem", PinSHA256: []string{pin, "a;b"}, PinFile: "/etc/pins",
		CallTimeout: 12 * time.Second, StartupTimeout: 1500 * time.Millisecond, MaxCallTimeout: 900 * time.Second,
		MaxMemoryMB: 256, MaxResponseMB: MaxResponseMB,
		TrustReadOnly: true, Sampling: true, KeepAlive: false,
		LooseSecrets: []string{"loose-token", "loose-key", "loose-pass"},
	}
	if !reflect.DeepEqual(exported(got), want) {
		t.Errorf("decoded\n%+v\nwant\n%+v", exported(got), want)
	}
	if !reflect.DeepEqual(*exported(got).Auth, *want.Auth) {
		t.Errorf("auth %+v, want %+v", *got.Auth, *want.Auth)
	}
	if !got.pinFileKey || got.authNotObject || !reflect.DeepEqual(got.raw, raw) {
		t.Errorf("bookkeeping: pinFileKey %v authNotObject %v raw kept %v", got.pinFileKey, got.authNotObject, reflect.DeepEqual(got.raw, raw))
	}
}

// An entry with only what it needs gets the defaults; "stdio" is the
// transport of an entry without a type.
func TestDecodeConfigDefaults(t *testing.T) {
	got := exported(DecodeConfig(map[string]any{"command": "x"}))
	want := Config{Transport: "stdio", Command: "x",
		CallTimeout: DefaultCallTimeout, StartupTimeout: DefaultStartupTimeout, MaxCallTimeout: MaxTimeoutSeconds * time.Second,
		MaxMemoryMB: DefaultMaxMemoryMB, MaxResponseMB: DefaultMaxResponseMB, KeepAlive: true}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("decoded\n%+v\nwant\n%+v", got, want)
	}
}

// A value of the wrong type is refused where the entry is loaded
// (Resolve runs ValidateEntry), with the message validation always gave;
// the decoder alone, which readers of unvalidated entries use, reads it
// as absent.
func TestDecodeConfigWrongTypeRefusedByValidation(t *testing.T) {
	base := `"type": "http", "url": "https://h/mcp"`
	cases := []struct {
		entry, msg string
		check      func(Config) bool
	}{
		{`"command": "x", "args": "a b"`, "Server 'srv': Arguments must be a list", func(c Config) bool { return c.Args == nil }},
		{`"command": "x", "env": ["A=1"]`, "Server 'srv': Environment variables must be a dictionary", func(c Config) bool { return c.Env == nil }},
		{`"command": "x", "cwd": 3`, "Server 'srv': cwd must be a non-empty directory path", func(c Config) bool { return c.Dir == "" }},
		{base + `, "headers": "x"`, "Server 'srv': Headers must be a dictionary", func(c Config) bool { return c.ConfigHeaders == nil }},
		{base + `, "auth": "x"`, "Server 'srv': Auth config must be a dictionary", func(c Config) bool { return c.Auth == nil && c.authNotObject }},
		{base + `, "oauth": {"client_id": 5}`, "Server 'srv': oauth.client_id must be a string", func(c Config) bool { return c.OAuthClientID == "" }},
		{base + `, "pin_sha256": 5`, `Server 'srv': pin_sha256 must be a pin ("sha256//<base64>") or a list of them`, func(c Config) bool { return c.PinSHA256 == nil }},
		{base + `, "pin_file": 5`, `Server 'srv': pin_file must be the path of a file of pins, one "sha256//<base64>" a line`, func(c Config) bool { return c.PinFile == "" && c.pinFileKey }},
		{base + `, "timeout": "60"`, "Server 'srv': Timeout must be a positive number", func(c Config) bool { return c.CallTimeout == DefaultCallTimeout }},
		{base + `, "startup_timeout": "9"`, "Server 'srv': Startup timeout must be a positive number of seconds", func(c Config) bool { return c.StartupTimeout == DefaultStartupTimeout }},
		{base + `, "max_memory_mb": "1G"`, "Server 'srv': max_memory_mb must be a positive number of megabytes", func(c Config) bool { return c.MaxMemoryMB == DefaultMaxMemoryMB }},
		{base + `, "trust_readonly": "true"`, "Server 'srv': trust_readonly must be true or false (true: act on the server's read-only and idempotent tool annotations: cache its read-only tools)", func(c Config) bool { return !c.TrustReadOnly }},
		{base + `, "sampling": 1`, "Server 'srv': sampling must be true or false (true: the server may ask pflow's configured LLM for completions)", func(c Config) bool { return !c.Sampling }},
		{base + `, "keep_alive": "no"`, "Server 'srv': keep_alive must be true or false (false: a long-lived pflow, such as pflow mcp serve, starts the server afresh for every run)", func(c Config) bool { return c.KeepAlive }},
		{`"type": 7, "url": "https://h"`, "Server 'srv': Unsupported transport type: 7. Supported: 'stdio' (default), 'http', 'sse', 'uds'", func(c Config) bool { return c.Transport == "stdio" }},
	}
	for _, c := range cases {
		raw := decodeText(t, "{"+c.entry+"}")
		_, err := Resolve("srv", raw, nil, io.Discard)
		if err == nil || err.Error() != c.msg {
			t.Errorf("%s: Resolve error = %v, want %q", c.entry, err, c.msg)
		}
		if !c.check(DecodeConfig(raw)) {
			t.Errorf("%s: decoded %+v", c.entry, DecodeConfig(raw))
		}
	}
}

// Resolve builds the Server from the decoded config: credentials read
// from token_env are in its auth header, the ${VAR}s they come from are
// named, and the config hash digests what it always did (the expanded
// entry, its auth holding the credential read, and the pins of a
// pin_file), so step cache keys built from it (Identity) do not change.
func TestResolveFromDecodedConfig(t *testing.T) {
	pin := "sha256//" + strings.Repeat("B", 43) + "="
	pinFile := filepath.Join(t.TempDir(), "pins")
	if err := os.WriteFile(pinFile, []byte("# pins\n"+pin+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	raw := decodeText(t, `{"type": "http", "url": "https://${HOST}/mcp", "headers": {"X-Team": "${TEAM}"},
		"auth": {"type": "bearer", "token_env": "SVC_TOKEN"}, "pin_file": "`+pinFile+`", "timeout": 5, "keep_alive": false}`)
	env := map[string]string{"HOST": "mcp.example.com", "TEAM": "core", "SVC_TOKEN": "s3cret-token-value"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	s, err := Resolve("srv", raw, lookup, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if s.URL != "https://mcp.example.com/mcp" || s.CallTimeout != 5*time.Second || s.KeepAlive {
		t.Errorf("url %q timeout %v keep-alive %v", s.URL, s.CallTimeout, s.KeepAlive)
	}
	wantHeaders := map[string]string{"X-Team": "core", "Authorization": "Bearer s3cret-token-value"}
	if !reflect.DeepEqual(s.Headers, wantHeaders) {
		t.Errorf("headers %v, want %v", s.Headers, wantHeaders)
	}
	if want := []string{"SVC_TOKEN", "TEAM"}; !reflect.DeepEqual(s.CredentialVars, want) {
		t.Errorf("credential vars %v, want %v", s.CredentialVars, want)
	}
	if want := []string{strings.TrimPrefix(pin, pinPrefix)}; !reflect.DeepEqual(s.Pins, want) {
		t.Errorf("pins %v, want %v", s.Pins, want)
	}
	// What the hash has always digested, written out.
	hashed := (&Expander{Lookup: lookup}).Expand(raw).(map[string]any)
	auth := maps.Clone(hashed["auth"].(map[string]any))
	auth["token"] = "s3cret-token-value"
	hashed["auth"] = auth
	hashed["pin_file\x00pins"] = s.Pins
	if want := configHash("srv", hashed); s.ConfigHash != want {
		t.Errorf("config hash %s, want %s", s.ConfigHash, want)
	}
	if got := s.Redact("Bearer s3cret-token-value"); strings.Contains(got, "s3cret") {
		t.Errorf("token not masked: %q", got)
	}
}

// The keys SecretAuthKeys and LooseSecretKeys name (what mcp list masks)
// are the values the decoded config gives as secrets (what runs mask).
func TestSecretKeysAreTheDecodedSecrets(t *testing.T) {
	for _, k := range SecretAuthKeys() {
		c := DecodeConfig(map[string]any{"auth": map[string]any{"type": "bearer", k: "v-" + k}})
		if !slices.Contains(c.Auth.secrets(), "v-"+k) {
			t.Errorf("auth.%s is not among the decoded secrets %q", k, c.Auth.secrets())
		}
	}
	for _, k := range LooseSecretKeys() {
		c := DecodeConfig(map[string]any{k: "v-" + k})
		if !slices.Contains(c.LooseSecrets, "v-"+k) {
			t.Errorf("%s is not among the decoded loose secrets %q", k, c.LooseSecrets)
		}
	}
	c := DecodeConfig(map[string]any{"auth": map[string]any{"type": "basic", "username": "v-username", "header": "v-header"}})
	if n := len(slices.DeleteFunc(c.Auth.secrets(), func(s string) bool { return s == "" })); n != 0 {
		t.Errorf("auth values that are no secret are among the secrets: %q", c.Auth.secrets())
	}
}
