package mcpclient

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"io"
	"maps"
	"net/http"
	"strings"
	"time"

	"github.com/pflow-go/pflow/internal/netpolicy"
	"github.com/pflow-go/pflow/internal/pferr"
	"github.com/pflow-go/pflow/internal/redact"
	"github.com/pflow-go/pflow/internal/value"
)

// Sampler answers a server's sampling/createMessage request (a server whose
// config says "sampling": true may ask pflow's configured LLM).
//
//lint:ignore SA1019 pflow speaks the 2025 MCP revisions too, where sampling is current (docs/decisions.md, "Both protocol revisions")
type Sampler func(context.Context, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error)

// Server is one configured server with every ${VAR} expanded, ready to
// connect to: its decoded entry (Config) and what pflow works out from it.
// It lives only in memory: secrets are never written back.
type Server struct {
	Name string
	Config
	// ProcessEnv looks up variables of pflow's own environment that a stdio
	// server inherits (PATH, HOME, ...; see inheritedEnv).
	ProcessEnv func(string) (string, bool)
	// Headers are the headers sent to an http/sse server: the entry's
	// custom headers plus the one its "auth" makes (BuildHeaders).
	Headers map[string]string
	// CredentialVars are the variables the credentials of the entry come
	// from (${VAR} in "headers" and "auth", auth.token_env / key_env): an
	// authentication failure names them.
	CredentialVars []string
	// TLS is the TLS configuration of a server with a "ca_file" (nil: Go's
	// defaults and the system's CAs).
	TLS *tls.Config
	// Pins are the keys a certificate of the server's chain must have
	// ("pin_sha256", "pin_file"): the base64 SHA-256 of a
	// SubjectPublicKeyInfo (none: no pinning).
	Pins []string
	// Network is the policy of the run (or command) the connection is for:
	// where its requests and redirects may go (nil: a run from the
	// command line with no network settings). Set it before connecting.
	Network *netpolicy.Policy
	// TokenFile is where the server's stored OAuth sign-in lives ("" : no
	// sign-in is used; see docs/decisions.md, "Remote servers and OAuth").
	TokenFile string
	// oauth, when set, replaces the run's non-interactive OAuth handler (an
	// interactive sign-in: Login, ConnectSignIn).
	oauth auth.OAuthHandler
	// Sample answers the server's sampling requests (Config.Sampling).
	Sample Sampler
	// ConfigHash identifies the expanded config: a pooled session whose
	// server's config changed is replaced.
	ConfigHash string
	// Secrets masks, in every message built from server output (errors, the
	// server's stderr tail), the config's secrets (AddConfigSecrets) and
	// every value a ${VAR} reference expanded to.
	Secrets *redact.Redactor
}

// Resolve expands a raw config entry (see docs/decisions.md, "Undefined ${VAR}
// expands to empty, with a warning") and builds the Server. Undefined
// variables expand to "" with one warning each on log; an auth header whose
// credential expanded to empty is not sent, with a warning.
func Resolve(name string, raw map[string]any, lookup func(string) (string, bool), log io.Writer) (*Server, error) {
	if log == nil {
		log = io.Discard
	}
	raw, _ = NormalizeEntry(name, raw)
	if err := ValidateEntry(name, raw); err != nil {
		return nil, err
	}
	declared := DecodeConfig(raw)
	if declared.Disabled {
		return nil, pferr.Newf(pferr.Config, "MCP server '%s' is disabled (\"disabled\": true in mcp-servers.json)", name).
			WithHint("Remove \"disabled\": true from its entry to use it (pflow mcp add with the entry without it), then pflow mcp sync " + name + ".")
	}
	secrets := redact.NewRedactor()
	track := func(k string) (string, bool) {
		if lookup == nil {
			return "", false
		}
		v, ok := lookup(k)
		if ok {
			secrets.AddSecret(k, v)
		}
		return v, ok
	}
	e := &Expander{Lookup: track}
	s := &Server{
		Name:       name,
		Config:     DecodeConfig(e.Expand(raw).(map[string]any)),
		ProcessEnv: lookup,
	}
	switch s.Transport {
	case "stdio":
		if s.Env == nil {
			s.Env = map[string]string{}
		}
	case "uds":
	default:
		if err := remoteRules(s, track); err != nil {
			return nil, err
		}
		s.Headers = BuildHeaders(name, &s.Config, log)
		s.CredentialVars = declared.credentialVars()
	}
	// After the credentials named by token_env / key_env are read: the
	// hash tells apart every identity the server is reached as.
	// Pins read from a pin_file are part of it too.
	s.ConfigHash = configHash(name, s.hashed())
	e.WarnMissing(log, name)
	// Literal secrets written into the config are redacted too.
	AddConfigSecrets(secrets, name, raw, lookup)
	s.Secrets = secrets
	return s, nil
}

// hashed is what the config hash digests: the expanded entry, with the
// credentials read from the variables auth.token_env / key_env name in
// its "auth", and the pins of a "pin_file".
func (s *Server) hashed() map[string]any {
	h := s.raw
	if s.Auth != nil && len(s.Auth.fromEnv) > 0 {
		h = maps.Clone(h)
		a := maps.Clone(s.Auth.raw)
		for k, v := range s.Auth.fromEnv {
			a[k] = v
		}
		h["auth"] = a
	}
	if s.pinFileKey && len(s.Pins) > 0 {
		h = maps.Clone(h)
		h["pin_file\x00pins"] = s.Pins
	}
	return h
}

// poolHash tells apart the sessions a pool may hand out for the server:
// its config and the network policy its connections were checked under
// (a session opened under another policy is replaced).
func (s *Server) poolHash() string {
	if s.Transport != "http" && s.Transport != "sse" {
		return s.ConfigHash
	}
	return s.ConfigHash + "\x00" + policyKey(s.Network)
}

// policyKey renders a network policy as a key.
func policyKey(p *netpolicy.Policy) string {
	if p == nil {
		return "default"
	}
	return fmt.Sprintf("agent=%t private=%t hosts=%q", p.Agent, p.AllowPrivate, p.AllowHosts)
}

// configHash digests an expanded config (its secrets included, never
// stored in clear).
func configHash(name string, cfg map[string]any) string {
	b, _ := json.Marshal(cfg) // maps marshal with sorted keys
	sum := sha256.Sum256(append([]byte(name+"\x00"), b...))
	return hex.EncodeToString(sum[:16])
}

func seconds(v any, def time.Duration) time.Duration {
	if f, ok := number(v); ok && f > 0 {
		return time.Duration(f * float64(time.Second))
	}
	return def
}

func hasControl(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return true
		}
	}
	return false
}

// BuildHeaders returns the custom headers plus the auth header of an
// (expanded) http/sse entry. Values with control characters and empty
// credentials are not sent, with a warning on log.
func BuildHeaders(server string, c *Config, log io.Writer) map[string]string {
	out := map[string]string{}
	for _, k := range value.SortedKeys(c.ConfigHeaders) {
		v := c.ConfigHeaders[k]
		if hasControl(v) || hasControl(k) {
			fmt.Fprintf(log, "Warning: MCP server '%s': header %s contains invalid control characters; not sent\n", server, k)
			continue
		}
		out[http.CanonicalHeaderKey(k)] = v
	}
	if c.authNotObject {
		fmt.Fprintf(log, "Warning: MCP server '%s': Auth config is not a dictionary\n", server)
		return out
	}
	a := c.Auth
	if a == nil {
		return out
	}
	field := func(label, v string) bool {
		if strings.TrimSpace(v) == "" {
			fmt.Fprintf(log, "Warning: MCP server '%s': %s is empty (check the variable it comes from); the auth header is not sent\n", server, label)
			return false
		}
		if hasControl(v) {
			fmt.Fprintf(log, "Warning: MCP server '%s': %s contains invalid control characters; the auth header is not sent\n", server, label)
			return false
		}
		return true
	}
	switch a.Type {
	case "bearer":
		if tok := a.Token; field("bearer token", tok) {
			out["Authorization"] = "Bearer " + tok
		}
	case "api_key":
		header := a.Header
		if header == "" {
			header = "X-API-Key"
		}
		if key := a.Key; field("API key", key) {
			out[http.CanonicalHeaderKey(header)] = key
		}
	case "basic":
		u, p := a.Username, a.Password
		if field("basic auth username", u) && field("basic auth password", p) {
			if strings.Contains(u, ":") {
				fmt.Fprintf(log, "Warning: MCP server '%s': basic auth username contains ':' which servers may misread\n", server)
			}
			out["Authorization"] = "Basic " + base64.StdEncoding.EncodeToString([]byte(u+":"+p))
		}
	default:
		fmt.Fprintf(log, "Warning: MCP server '%s': Unknown auth type: %s\n", server, a.Type)
	}
	return out
}

// Redact masks the server's secrets in text (see Secrets) with
// redact.Redacted, the marker every pflow output uses.
func (s *Server) Redact(text string) string {
	if s.Secrets == nil {
		return text
	}
	return s.Secrets.String(text)
}

// notConfigured is the fixed error text for an unknown server (see
// docs/decisions.md, "Every MCP failure is a step error").
func notConfigured(name string, f *File) error {
	avail := strings.Join(f.Names(), ", ")
	if avail == "" {
		avail = "none"
	}
	return pferr.Newf(pferr.NotFound, "Server %s not configured", name).
		WithHint(fmt.Sprintf("Configured MCP servers: %s. Add it with: pflow mcp add '{\"%s\": {\"command\": \"...\"}}', then run: pflow mcp sync %s", avail, name, name))
}

// Identity digests the effective config of server name in the config file
// at path, as a run would connect with it: every ${VAR} expanded and the
// credentials token_env / key_env name read, so URL, command, args, env,
// headers and auth, secrets included (the digest holds no secret in
// clear). Two configs that reach the server as different users differ. A
// server that cannot be resolved gets a digest of why, which no working
// config has.
func Identity(path, name string, lookup func(string) (string, bool)) string {
	s, err := LoadServer(path, name, lookup, io.Discard)
	if err != nil {
		sum := sha256.Sum256([]byte("unresolved\x00" + name + "\x00" + err.Error()))
		return "unresolved:" + hex.EncodeToString(sum[:16])
	}
	return s.ConfigHash
}

// LoadServer loads mcp-servers.json and resolves one server.
func LoadServer(path, name string, lookup func(string) (string, bool), log io.Writer) (*Server, error) {
	f, err := LoadFileShared(path)
	if err != nil {
		return nil, err
	}
	raw, ok := f.Servers[name]
	if !ok {
		return nil, notConfigured(name, f)
	}
	s, err := Resolve(name, raw, lookup, log)
	if err == nil && (s.Transport == "http" || s.Transport == "sse") {
		s.TokenFile = TokenPath(path, name)
	}
	return s, err
}
