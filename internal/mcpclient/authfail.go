package mcpclient

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/pferr"
	"github.com/pflow-go/pflow/internal/value"
)

// credentialVars are the variables a remote entry's credentials come from:
// the ${VAR} references in its (unexpanded) "headers" and "auth"
// credentials, and the variables its auth.token_env / auth.key_env name;
// sorted, each once.
func (c *Config) credentialVars() []string {
	seen := map[string]bool{}
	e := &Expander{Lookup: func(k string) (string, bool) { seen[k] = true; return "", true }}
	e.Expand(c.ConfigHeaders)
	if a := c.Auth; a != nil {
		e.Expand(a.credentials())
		for _, f := range a.envCredentials() {
			if f.name != "" {
				seen[f.name] = true
			}
		}
	}
	return value.SortedKeys(seen)
}

// AuthFailed is the error of a request a remote server refused for its
// credentials (HTTP 401 or 403) when signing in cannot help: the server
// publishes no OAuth metadata (an API-key gateway, a server behind a
// token). It names the server and the config keys that carry credentials
// ("headers", "auth", "token_env"/"key_env"), and the variables they come
// from.
func AuthFailed(srv *Server, status int) *pferr.Error {
	var msg string
	if status == http.StatusForbidden {
		msg = fmt.Sprintf("Access forbidden: MCP server %s refused the request (HTTP 403)", srv.Name)
	} else {
		msg = fmt.Sprintf("Authentication failed: MCP server %s refused the request (HTTP 401)", srv.Name)
	}
	keys := `"headers" (e.g. {"X-API-Key": "${SVC_KEY}"}) or "auth" (e.g. {"type": "bearer", "token_env": "SVC_TOKEN"})`
	var hint string
	switch {
	case len(srv.Headers) == 0:
		msg += ": pflow sent no credentials"
		hint = fmt.Sprintf("Add the server's credential to its entry in mcp-servers.json: %s. The server publishes no OAuth metadata, so signing in cannot help.", keys)
	case len(srv.CredentialVars) > 0:
		hint = fmt.Sprintf("Check the credentials of server '%s' in mcp-servers.json (%s): they come from %s (the environment, then pflow's settings env): check their values. The server publishes no OAuth metadata, so signing in cannot help.",
			srv.Name, keys, strings.Join(srv.CredentialVars, ", "))
	default:
		hint = fmt.Sprintf("Check the credentials written in the entry of server '%s' in mcp-servers.json: %s. The server publishes no OAuth metadata, so signing in cannot help.", srv.Name, keys)
	}
	if status == http.StatusForbidden {
		hint += " A 403 may also mean the credential is valid but lacks a permission the tool needs."
	}
	e := classed(pferr.New(pferr.Execution, msg), node.ClassAuthFailed).WithHint(hint)
	e.Details["status_code"] = status
	return e
}

// publishesOAuth reports whether a remote server publishes OAuth metadata,
// so that signing in can help: the protected-resource metadata its refusal
// names (WWW-Authenticate resource_metadata), or that sits at the
// well-known addresses of its URL (RFC 9728), or authorization-server
// metadata at its root (the MCP authorization spec of 2025-03-26).
func publishesOAuth(ctx context.Context, srv *Server, resp *http.Response) bool {
	var urls []string
	if resp != nil {
		if ch, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate")); err == nil {
			for _, c := range ch {
				if u := c.Params["resource_metadata"]; u != "" {
					urls = append(urls, u)
				}
			}
		}
	}
	if u, err := url.Parse(srv.URL); err == nil && u.Host != "" {
		root := (&url.URL{Scheme: u.Scheme, Host: u.Host}).String()
		if p := strings.Trim(u.Path, "/"); p != "" {
			urls = append(urls, root+"/.well-known/oauth-protected-resource/"+p)
		}
		urls = append(urls, root+"/.well-known/oauth-protected-resource", root+"/.well-known/oauth-authorization-server")
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	tr := newRemoteTransport(srv)
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	for _, m := range urls {
		if hasOAuthMetadata(ctx, c, m) {
			return true
		}
	}
	return false
}

// hasOAuthMetadata fetches one metadata address (https, or http to a
// loopback host) and reports whether it holds OAuth metadata: a
// protected resource's authorization servers, or an authorization
// server's endpoint.
func hasOAuthMetadata(ctx context.Context, c *http.Client, raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && (u.Scheme != "http" || !isLoopbackHost(u.Hostname()))) {
		return false
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, raw, nil)
	if err != nil {
		return false
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false
	}
	var meta struct {
		AuthorizationServers  []string `json:"authorization_servers"`
		AuthorizationEndpoint string   `json:"authorization_endpoint"`
	}
	if json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&meta) != nil {
		return false
	}
	return len(meta.AuthorizationServers) > 0 || meta.AuthorizationEndpoint != ""
}
