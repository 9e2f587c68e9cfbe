package app

import (
	"context"
	"io"
	"time"

	"github.com/pflow-go/pflow/internal/mcpclient"
	"github.com/pflow-go/pflow/internal/pferr"
	"github.com/pflow-go/pflow/internal/settings"
)

// LoginReport is what pflow mcp login reports (never the token).
type LoginReport struct {
	Server    string    `json:"server"`
	Scopes    []string  `json:"granted_scopes,omitempty"`
	ExpiresAt time.Time `json:"expires_at,omitzero"`
	Refresh   bool      `json:"refreshable"`
	TokenFile string    `json:"token_file"`
}

// MCPLogin signs in to a remote server interactively (see docs/decisions.md,
// "Remote servers and OAuth") and
// stores the token under $PFLOW_HOME/oauth.
func (a *App) MCPLogin(ctx context.Context, name string, o mcpclient.LoginOptions) (*LoginReport, error) {
	st, _ := settings.Load(a.Paths.Settings, io.Discard)
	srv, err := mcpclient.LoadServer(a.Paths.MCPServers, name, a.EnvLookup(st), a.Log)
	if err != nil {
		return nil, err
	}
	srv.Network = a.netPolicy(st, false)
	if srv.Transport == "stdio" || srv.Transport == "uds" {
		return nil, pferr.Newf(pferr.Validation, "Server %s is a local (%s) server: there is nothing to sign in to", name, srv.Transport).
			WithHint("Sign-in is for remote servers (\"type\": \"http\"); a local server gets its credentials from \"env\".")
	}
	tok, err := mcpclient.Login(ctx, srv, srv.TokenFile, o)
	if err != nil {
		return nil, err
	}
	a.Secrets.AddSecret("oauth access token", tok.Token.AccessToken)
	a.Secrets.AddSecret("oauth refresh token", tok.Token.RefreshToken)
	return &LoginReport{Server: name, Scopes: tok.Granted, ExpiresAt: tok.Token.Expiry, Refresh: tok.Token.RefreshToken != "", TokenFile: srv.TokenFile}, nil
}

// MCPLogout forgets a server's stored sign-in; false when there was none.
func (a *App) MCPLogout(name string) (bool, error) {
	if _, err := a.MCPServers(); err != nil {
		return false, err
	}
	return mcpclient.DeleteToken(mcpclient.TokenPath(a.Paths.MCPServers, name))
}

// MCPAuthState says whether a remote server has a stored sign-in ("" when
// it has none).
func (a *App) MCPAuthState(name string) string {
	st, err := mcpclient.LoadToken(mcpclient.TokenPath(a.Paths.MCPServers, name))
	if err != nil {
		return "stored sign-in unreadable: run pflow mcp login " + name
	}
	return mcpclient.AuthState(st, a.Now())
}

// withSignIn lets a remote server's connection use its stored sign-in (as
// mcpclient.LoadServer does for runs).
func (a *App) withSignIn(srv *mcpclient.Server) {
	if srv.Transport == "http" || srv.Transport == "sse" {
		srv.TokenFile = mcpclient.TokenPath(a.Paths.MCPServers, srv.Name)
	}
}
