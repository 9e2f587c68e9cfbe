package mcpclient

import (
	"slices"
	"time"

	"github.com/pflow-go/pflow/internal/value"
)

// Config is one server entry of mcp-servers.json, decoded: every key pflow
// reads, typed. DecodeConfig is the one place that reads an entry's keys;
// ValidateEntry checks the raw JSON before (a value of the wrong type is
// refused there with its message, and decodes here as if it were absent).
// The file itself keeps the raw entries (File.Servers), so keys pflow does
// not know are written back verbatim.
type Config struct {
	// Transport is "type": stdio (when absent), http, sse or uds.
	Transport string
	// Disabled is "disabled": true: the entry is kept but not synced,
	// started or listed as usable.
	Disabled bool
	// stdio: "command", "args" (each item as text), "env" (each value as
	// text) and "cwd" ("" = pflow's working directory).
	Command string
	Args    []string
	Env     map[string]string
	Dir     string
	// uds: "path", the Unix socket of a server that is already running.
	SocketPath string
	// http / sse: "url", the custom "headers" (each value as text; the
	// headers sent are Server.Headers, which adds "auth"), "auth",
	// "oauth" (client_id, client_secret, scopes), "insecure", "ca_file",
	// "pin_sha256" (as written: one pin, or several separated by ';', per
	// item) and "pin_file".
	URL                              string
	ConfigHeaders                    map[string]string
	Auth                             *AuthConfig
	OAuthClientID, OAuthClientSecret string
	OAuthScopes                      []string
	Insecure                         bool
	CAFile                           string
	PinSHA256                        []string
	PinFile                          string
	// Timeouts and limits, defaults filled in (see docs/decisions.md,
	// "Timeouts and memory limits"): "timeout" (CallTimeout),
	// "startup_timeout", "max_timeout" (MaxCallTimeout: caps a call that
	// keeps reporting progress past its idle CallTimeout),
	// "max_memory_mb" and "max_response_mb" (bounds one message from a
	// stdio server; at most MaxResponseMB).
	CallTimeout    time.Duration
	StartupTimeout time.Duration
	MaxCallTimeout time.Duration
	MaxMemoryMB    int
	MaxResponseMB  int
	// TrustReadOnly is "trust_readonly": true: pflow acts on the server's
	// read-only and idempotent tool annotations.
	TrustReadOnly bool
	// Sampling is "sampling": true: the server may ask pflow's configured
	// LLM for completions (sampling/createMessage), answered by
	// Server.Sample. Without it pflow does not advertise sampling and
	// refuses such requests.
	Sampling bool
	// KeepAlive lets a long-lived pflow (pflow mcp serve) keep the session
	// open across runs ("keep_alive", default true; see Pool).
	KeepAlive bool
	// LooseSecrets are the strings of the top-level keys some clients'
	// configs carry a credential in (looseSecretKeys): pflow does not use
	// them, it masks them.
	LooseSecrets []string

	// raw is the entry the Config was decoded from: the config hash digests
	// it (configHash).
	raw map[string]any
	// pinFileKey: the entry has a "pin_file" key (whatever its value).
	pinFileKey bool
	// authNotObject: "auth" is there but not an object (BuildHeaders warns).
	authNotObject bool
}

// AuthConfig is the "auth" object of an http/sse entry. Values are text
// (a number is written as its digits); TokenEnv and KeyEnv, the variables
// the token / key are read from instead, only as strings.
type AuthConfig struct {
	Type               string // bearer | api_key | basic
	Token, TokenEnv    string // bearer
	Key, KeyEnv        string // api_key
	Header             string // api_key ("" = X-API-Key)
	Username, Password string // basic

	// raw is the object as written, for the config hash; fromEnv the
	// values credentialsFromEnv read for it, by key ("token", "key").
	raw     map[string]any
	fromEnv map[string]string
}

// looseSecretKeys are top-level keys that hold a credential in some
// clients' configs; pflow masks their string values.
var looseSecretKeys = [...]string{"token", "apiKey", "api_key", "password"}

// LooseSecretKeys returns the top-level keys of an entry that hold a
// credential in some clients' configs (Config.LooseSecrets).
func LooseSecretKeys() []string { return slices.Clone(looseSecretKeys[:]) }

// SecretAuthKeys returns the keys of an entry's "auth" whose values are
// secrets: AuthConfig's Token, Key and Password (AuthConfig.secrets).
func SecretAuthKeys() []string { return []string{"token", "key", "password"} }

// DecodeConfig decodes one (normalised: NormalizeEntry) server entry. It
// does not validate: Resolve runs ValidateEntry first, and readers of
// entries that may be invalid (listing, the disabled and trust flags) get
// the zero value (or the default) of a key whose value has the wrong type,
// as they would for a missing key.
func DecodeConfig(cfg map[string]any) Config {
	c := Config{
		raw:            cfg,
		Transport:      transport(cfg),
		CallTimeout:    seconds(cfg["timeout"], DefaultCallTimeout),
		StartupTimeout: seconds(cfg["startup_timeout"], DefaultStartupTimeout),
		MaxCallTimeout: seconds(cfg["max_timeout"], MaxTimeoutSeconds*time.Second),
		MaxMemoryMB:    DefaultMaxMemoryMB,
		MaxResponseMB:  DefaultMaxResponseMB,
		KeepAlive:      cfg["keep_alive"] != false,
		Sampling:       cfg["sampling"] == true,
	}
	c.Disabled, _ = cfg["disabled"].(bool)
	c.TrustReadOnly, _ = cfg["trust_readonly"].(bool)
	if f, ok := number(cfg["max_memory_mb"]); ok && f > 0 {
		c.MaxMemoryMB = int(f)
	}
	if f, ok := number(cfg["max_response_mb"]); ok && f > 0 {
		c.MaxResponseMB = int(min(f, MaxResponseMB))
	}
	// stdio
	c.Command, _ = cfg["command"].(string)
	c.Dir, _ = cfg["cwd"].(string)
	c.Args = texts(cfg["args"])
	c.Env = textMap(cfg["env"])
	// uds
	c.SocketPath, _ = cfg["path"].(string)
	// http / sse
	c.URL, _ = cfg["url"].(string)
	c.ConfigHeaders = textMap(cfg["headers"])
	if a, present := cfg["auth"]; present && a != nil {
		if m, ok := a.(map[string]any); ok {
			c.Auth = decodeAuth(m)
		} else {
			c.authNotObject = true
		}
	}
	if o, ok := cfg["oauth"].(map[string]any); ok {
		c.OAuthClientID, _ = o["client_id"].(string)
		c.OAuthClientSecret, _ = o["client_secret"].(string)
		c.OAuthScopes = texts(o["scopes"])
	}
	c.Insecure, _ = cfg["insecure"].(bool)
	c.CAFile, _ = cfg["ca_file"].(string)
	if v, ok := cfg["pin_sha256"]; ok && v != nil {
		c.PinSHA256, _ = pinValues(v)
	}
	_, c.pinFileKey = cfg["pin_file"]
	c.PinFile, _ = cfg["pin_file"].(string)
	for _, k := range looseSecretKeys {
		if s, ok := cfg[k].(string); ok {
			c.LooseSecrets = append(c.LooseSecrets, s)
		}
	}
	return c
}

func decodeAuth(m map[string]any) *AuthConfig {
	text := func(k string) string { return value.Stringify(m[k]) }
	a := &AuthConfig{
		raw:  m,
		Type: text("type"), Token: text("token"), Key: text("key"), Header: text("header"),
		Username: text("username"), Password: text("password"),
	}
	a.TokenEnv, _ = m["token_env"].(string)
	a.KeyEnv, _ = m["key_env"].(string)
	return a
}

// envCredential is an auth credential that may be read from the
// environment variable another key names.
type envCredential struct {
	envKey, key string  // "token_env", "token"
	name        string  // the variable (the envKey's value; "" = none)
	dst         *string // the credential's field
}

// envCredentials are the auth credentials read from a variable instead
// (token_env → token, key_env → key): what credentialsFromEnv reads and
// credentialVars names.
func (a *AuthConfig) envCredentials() []envCredential {
	return []envCredential{
		{"token_env", "token", a.TokenEnv, &a.Token},
		{"key_env", "key", a.KeyEnv, &a.Key},
	}
}

// secrets are the auth values that are secrets (masked in output): the
// token, key and password.
func (a *AuthConfig) secrets() []string { return []string{a.Token, a.Key, a.Password} }

// credentials are the auth values a credential may come from (a ${VAR}
// in them is named when the server refuses them): the secrets and the
// basic auth username.
func (a *AuthConfig) credentials() []string { return append(a.secrets(), a.Username) }

// texts returns the items of a JSON list as text (nil: not a list).
func texts(v any) []string {
	list, ok := v.([]any)
	if !ok {
		return nil
	}
	var out []string
	for _, x := range list {
		out = append(out, value.Stringify(x))
	}
	return out
}

// textMap returns a JSON object's values as text (nil: not an object).
func textMap(v any) map[string]string {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, x := range m {
		out[k] = value.Stringify(x)
	}
	return out
}
