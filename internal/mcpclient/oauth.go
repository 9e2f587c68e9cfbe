package mcpclient

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/pflow-go/pflow/internal/fsutil"
	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/pferr"
)

// OAuth sign-in for remote MCP servers (see docs/decisions.md, "Remote servers
// and OAuth"), per the MCP
// authorization spec: go-sdk's AuthorizationCodeHandler discovers the
// protected-resource and authorization-server metadata, registers pflow
// (dynamic client registration, or the client_id/client_secret of the
// server's "oauth" config) and runs the authorization-code flow with PKCE
// and the resource parameter; pflow adds the loopback redirect, the token
// store and the rule that a run never waits for a browser.

// StoredToken is a server's sign-in, kept in $PFLOW_HOME/oauth/<server>.json
// (mode 0600): what is needed to use and refresh the token without the
// authorization server's metadata.
type StoredToken struct {
	Server       string        `json:"server"`
	URL          string        `json:"url"` // the MCP server the token is for (the resource)
	ClientID     string        `json:"client_id"`
	ClientSecret string        `json:"client_secret,omitempty"`
	AuthURL      string        `json:"auth_url"`
	TokenURL     string        `json:"token_url"`
	AuthStyle    int           `json:"auth_style"`
	Scopes       []string      `json:"scopes,omitempty"` // requested
	Granted      []string      `json:"granted_scopes,omitempty"`
	Token        *oauth2.Token `json:"token"`
	SignedInAt   time.Time     `json:"signed_in_at"`
}

// TokenPath is where the sign-in of server name is stored, beside the
// server config file configPath.
func TokenPath(configPath, name string) string {
	return filepath.Join(filepath.Dir(configPath), "oauth", name+".json")
}

// LoadToken reads a stored sign-in; nil without error when there is none.
func LoadToken(path string) (*StoredToken, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var st StoredToken
	if err := json.Unmarshal(data, &st); err != nil || st.Token == nil {
		return nil, fmt.Errorf("the stored sign-in %s is unreadable (%v): sign in again", path, err)
	}
	return &st, nil
}

func saveToken(path string, st *StoredToken) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return fsutil.WriteFileAtomic(path, b, 0o600)
}

// DeleteToken removes a stored sign-in (logout); true when there was one.
func DeleteToken(path string) (bool, error) {
	err := os.Remove(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// NeedsSignIn is the error of a connection that needs a sign-in pflow does
// not have: runs never wait for a browser.
func NeedsSignIn(server, why string) *pferr.Error {
	msg := fmt.Sprintf("Server %s needs sign-in: run 'pflow mcp login %s'", server, server)
	if why != "" {
		msg += " (" + why + ")"
	}
	return classed(pferr.New(pferr.Execution, msg), node.ClassAuthFailed).
		WithHint(fmt.Sprintf("A person signs in once, in a terminal with a browser: pflow mcp login %s. The token is stored under $PFLOW_HOME/oauth and refreshed automatically; runs never open a browser.", server))
}

func (st *StoredToken) config() *oauth2.Config {
	return &oauth2.Config{
		ClientID:     st.ClientID,
		ClientSecret: st.ClientSecret,
		Endpoint:     oauth2.Endpoint{AuthURL: st.AuthURL, TokenURL: st.TokenURL, AuthStyle: oauth2.AuthStyle(st.AuthStyle)},
		Scopes:       st.Scopes,
	}
}

// savingSource refreshes the stored token through its token endpoint
// (before it expires, and at once when forced) and stores each new one.
type savingSource struct {
	mu     sync.Mutex
	ctx    context.Context
	path   string
	st     *StoredToken
	source oauth2.TokenSource
	// onNew learns each new token (to mask it in every output).
	onNew func(*oauth2.Token)
}

func newSavingSource(ctx context.Context, path string, st *StoredToken) *savingSource {
	s := &savingSource{ctx: ctx, path: path, st: st}
	s.source = st.config().TokenSource(ctx, st.Token)
	return s
}

func (s *savingSource) Token() (*oauth2.Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.source.Token()
	if err != nil {
		return nil, err
	}
	if t.AccessToken != s.st.Token.AccessToken {
		s.keep(t)
	}
	return t, nil
}

// keep stores a new token (a refresh may omit the refresh token: keep ours).
func (s *savingSource) keep(t *oauth2.Token) {
	if t.RefreshToken == "" {
		t.RefreshToken = s.st.Token.RefreshToken
	}
	s.st.Token = t
	if s.onNew != nil {
		s.onNew(t)
	}
	_ = saveToken(s.path, s.st)
}

// refresh gets a new access token with the refresh token now, whatever
// the stored expiry says (the server refused the current one).
func (s *savingSource) refresh() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st.Token.RefreshToken == "" {
		return errors.New("no refresh token")
	}
	old := *s.st.Token
	old.Expiry = time.Now().Add(-time.Hour)
	t, err := s.st.config().TokenSource(s.ctx, &old).Token()
	if err != nil {
		return err
	}
	s.keep(t)
	s.source = s.st.config().TokenSource(s.ctx, t)
	return nil
}

// runAuth is the OAuth handler of a run, an mcp sync or mcp serve: it sends
// the stored token (refreshed as needed) and never starts a sign-in.
type runAuth struct {
	srv  *Server
	path string
	ctx  context.Context

	mu     sync.Mutex
	loaded bool
	source *savingSource
}

func (r *runAuth) TokenSource(context.Context) (oauth2.TokenSource, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.loaded {
		r.loaded = true
		st, err := LoadToken(r.path)
		if err != nil {
			return nil, NeedsSignIn(r.srv.Name, err.Error())
		}
		if st != nil {
			r.srv.Secrets.AddSecret("oauth access token", st.Token.AccessToken)
			r.srv.Secrets.AddSecret("oauth refresh token", st.Token.RefreshToken)
			r.source = newSavingSource(r.ctx, r.path, st)
			r.source.onNew = func(t *oauth2.Token) {
				r.srv.Secrets.AddSecret("oauth access token", t.AccessToken)
				r.srv.Secrets.AddSecret("oauth refresh token", t.RefreshToken)
			}
		}
	}
	if r.source == nil {
		return nil, nil
	}
	return r.source, nil
}

// Authorize answers a 401/403: a stored sign-in is refreshed once; without
// one (or when the refresh is refused) the run fails at once, saying how to
// sign in.
func (r *runAuth) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	resp.Body.Close()
	r.mu.Lock()
	src := r.source
	r.mu.Unlock()
	if src == nil {
		// Signing in helps only a server that publishes OAuth metadata; an
		// API-key gateway refused the credentials of the config.
		if !publishesOAuth(ctx, r.srv, resp) {
			return AuthFailed(r.srv, resp.StatusCode)
		}
		return NeedsSignIn(r.srv.Name, "")
	}
	if err := src.refresh(); err != nil {
		return NeedsSignIn(r.srv.Name, "the stored sign-in was refused and could not be refreshed: "+err.Error())
	}
	return nil
}

// LoginOptions configure an interactive sign-in.
type LoginOptions struct {
	// Out receives the URL to open and progress.
	Out io.Writer
	// Open opens the URL in a browser (nil: only print it).
	Open func(url string) error
	// Fetch, when set, replaces the browser: it gets the authorization URL
	// and must make the authorization server redirect to the loopback
	// redirect URI (tests and the conformance adapter follow it over HTTP).
	Fetch func(ctx context.Context, authURL string) error
}

// signIn is an interactive sign-in in progress: the loopback redirect
// listener and go-sdk's authorization-code handler, which stores every
// token it obtains (the first, and one after a scope step-up).
type signIn struct {
	h        auth.OAuthHandler
	captured *StoredToken
	saveErr  error
	close    func()
}

func newSignIn(srv *Server, path string, o LoginOptions) (*signIn, error) {
	if srv.Transport != "http" {
		return nil, pferr.Newf(pferr.Validation, "Server %s uses %s: sign-in works with streamable HTTP servers (\"type\": \"http\")", srv.Name, srv.Transport)
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, pferr.Newf(pferr.Execution, "cannot listen on 127.0.0.1 for the sign-in redirect: %v", err)
	}
	redirect := fmt.Sprintf("http://127.0.0.1:%d/callback", ln.Addr().(*net.TCPAddr).Port)

	type callback struct {
		res *auth.AuthorizationResult
		err error
	}
	got := make(chan callback, 1)
	// The state of the authorization URL this sign-in opened: any local
	// user can reach the loopback callback, so one that does not carry it
	// is answered and ignored, and the sign-in goes on waiting.
	var wantState atomic.Value
	mux := http.NewServeMux()
	mux.HandleFunc("/callback", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if want, opened := wantState.Load().(string); !opened || want != "" && subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(want)) != 1 {
			http.Error(w, "This is not the redirect of the sign-in pflow is waiting for (its state does not match); it is ignored.", http.StatusBadRequest)
			return
		}
		if e := q.Get("error"); e != "" {
			desc := q.Get("error_description")
			fmt.Fprintf(w, "<p>Sign-in to %s failed: %s %s. You can close this tab.</p>", html.EscapeString(srv.Name), html.EscapeString(e), html.EscapeString(desc))
			select {
			case got <- callback{err: fmt.Errorf("the authorization server refused: %s %s", e, desc)}:
			default:
			}
			return
		}
		fmt.Fprintf(w, "<p>Signed in to %s for pflow. You can close this tab.</p>", html.EscapeString(srv.Name))
		select {
		case got <- callback{res: &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}}:
		default:
		}
	})
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(ln)

	fetch := func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		if u, err := url.Parse(args.URL); err == nil {
			wantState.Store(u.Query().Get("state"))
		}
		fmt.Fprintf(o.Out, "Sign in to %s: open this URL in a browser (waiting for the redirect to %s):\n\n  %s\n\n", srv.Name, redirect, args.URL)
		switch {
		case o.Fetch != nil:
			if err := o.Fetch(ctx, args.URL); err != nil {
				return nil, err
			}
		case o.Open != nil:
			if err := o.Open(args.URL); err != nil {
				fmt.Fprintf(o.Out, "(could not open a browser: %v; open the URL yourself)\n", err)
			}
		}
		select {
		case c := <-got:
			return c.res, c.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}

	tr := newRemoteTransport(srv)
	si := &signIn{close: func() { hs.Close(); tr.CloseIdleConnections() }}
	cfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:              redirect,
		AuthorizationCodeFetcher: fetch,
		RequestRefreshToken:      true,
		Client:                   &http.Client{Transport: tr, Timeout: 30 * time.Second},
		ScopeFilter: func(discovered []string) []string {
			out := append([]string(nil), discovered...)
			for _, s := range srv.OAuthScopes {
				if !slices.Contains(out, s) {
					out = append(out, s)
				}
			}
			return out
		},
		NewTokenSource: func(ctx context.Context, c *oauth2.Config, t *oauth2.Token) (oauth2.TokenSource, error) {
			st := &StoredToken{Server: srv.Name, URL: srv.URL, ClientID: c.ClientID, ClientSecret: c.ClientSecret,
				AuthURL: c.Endpoint.AuthURL, TokenURL: c.Endpoint.TokenURL, AuthStyle: int(c.Endpoint.AuthStyle),
				Scopes: c.Scopes, Token: t, SignedInAt: time.Now().UTC()}
			if s, ok := t.Extra("scope").(string); ok {
				st.Granted = strings.Fields(s)
			}
			srv.Secrets.AddSecret("oauth access token", t.AccessToken)
			srv.Secrets.AddSecret("oauth refresh token", t.RefreshToken)
			si.captured = st
			si.saveErr = saveToken(path, st)
			return newSavingSource(ctx, path, st), nil
		},
	}
	if srv.OAuthClientID != "" {
		cc := &oauthex.ClientCredentials{ClientID: srv.OAuthClientID}
		if srv.OAuthClientSecret != "" {
			cc.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: srv.OAuthClientSecret}
		}
		cfg.PreregisteredClient = cc
	} else {
		cfg.DynamicClientRegistrationConfig = &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs: []string{redirect}, ClientName: "pflow", GrantTypes: []string{"authorization_code", "refresh_token"},
			ResponseTypes: []string{"code"}, TokenEndpointAuthMethod: "none"}}
	}
	h, err := auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		si.close()
		return nil, pferr.Newf(pferr.Validation, "cannot sign in to %s: %v", srv.Name, err)
	}
	si.h = signInHandler{h, srv}
	return si, nil
}

// signInHandler words a failed sign-in: the cause (an unreachable or
// misconfigured authorization server, a refused grant) instead of a bare
// "401".
type signInHandler struct {
	*auth.AuthorizationCodeHandler
	srv *Server
}

func (h signInHandler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	if err := h.AuthorizationCodeHandler.Authorize(ctx, req, resp); err != nil {
		var pe *pferr.Error
		if errors.As(err, &pe) || ctx.Err() != nil {
			return err
		}
		return pferr.Newf(pferr.Execution, "sign-in to %s failed: %s", h.srv.Name, h.srv.Redact(err.Error())).
			WithHint(fmt.Sprintf("Check \"url\" of server '%s' and that its authorization server is reachable, then run pflow mcp login %s again.", h.srv.Name, h.srv.Name))
	}
	return nil
}

// ConnectSignIn connects to srv like Connect, but answers the server's
// requests for authorization with an interactive sign-in (at connect, or
// later for a scope step-up), storing each token at path. The returned
// func ends the sign-in's redirect listener; call it after closing the
// session.
func ConnectSignIn(ctx context.Context, srv *Server, path string, o LoginOptions) (*Session, func(), error) {
	si, err := newSignIn(srv, path, o)
	if err != nil {
		return nil, nil, err
	}
	s2 := *srv
	s2.oauth = si.h
	sess, err := Connect(ctx, &s2, o.Out)
	if err != nil {
		si.close()
		return nil, nil, signInFailed(srv, err)
	}
	return sess, si.close, nil
}

// Login signs in to srv (streamable HTTP) interactively: it connects,
// answers the server's 401 with the authorization-code flow (PKCE, the
// resource parameter, a loopback redirect on 127.0.0.1), lists the tools to
// prove the token works, checks the scopes the config requires, and stores
// the token at path. It returns the stored sign-in.
func Login(ctx context.Context, srv *Server, path string, o LoginOptions) (*StoredToken, error) {
	si, err := newSignIn(srv, path, o)
	if err != nil {
		return nil, err
	}
	defer si.close()
	s2 := *srv
	s2.oauth = si.h
	sess, err := Connect(ctx, &s2, o.Out)
	if err != nil {
		return nil, signInFailed(srv, err)
	}
	defer sess.Close()
	if _, err := sess.ListTools(ctx); err != nil {
		return nil, signInFailed(srv, err)
	}
	if si.captured == nil {
		return nil, pferr.Newf(pferr.Validation, "Server %s did not ask for a sign-in: it answered without a token", srv.Name).
			WithHint("Nothing to do: pflow uses it as it is.")
	}
	if si.saveErr != nil {
		return nil, pferr.Newf(pferr.Execution, "signed in to %s, but cannot store the token at %s: %v", srv.Name, path, si.saveErr)
	}
	if missing := missingScopes(srv.OAuthScopes, si.captured.Granted); len(missing) > 0 && si.captured.Granted != nil {
		DeleteToken(path)
		return nil, pferr.Newf(pferr.Validation, "Server %s granted the scopes %s, but its config requires %s", srv.Name,
			strings.Join(si.captured.Granted, " "), strings.Join(missing, " ")).
			WithHint("Sign in with an account that may grant them, or change \"scopes\" in the server's \"oauth\" config.")
	}
	return si.captured, nil
}

func missingScopes(required, granted []string) []string {
	var out []string
	for _, s := range required {
		if !slices.Contains(granted, s) {
			out = append(out, s)
		}
	}
	return out
}

func signInFailed(srv *Server, err error) error {
	var pe *pferr.Error
	if errors.As(err, &pe) {
		return pe
	}
	return pferr.Newf(pferr.Execution, "sign-in to %s failed: %v", srv.Name, srv.Redact(err.Error())).
		WithHint(fmt.Sprintf("Check \"url\" of server '%s' and that its authorization server is reachable; then run pflow mcp login %s again.", srv.Name, srv.Name))
}

// AuthState says whether a remote server has a stored sign-in, for
// pflow mcp list: "signed in (expires in 52m)", "signed in (token expired;
// refreshed on next use)", or "" when there is none.
func AuthState(st *StoredToken, now time.Time) string {
	if st == nil {
		return ""
	}
	switch {
	case st.Token.Expiry.IsZero():
		return "signed in"
	case st.Token.Expiry.After(now):
		return fmt.Sprintf("signed in (token expires in %s)", st.Token.Expiry.Sub(now).Round(time.Minute))
	case st.Token.RefreshToken != "":
		return "signed in (token expired; refreshed on next use)"
	}
	return "sign-in expired: run pflow mcp login " + st.Server
}
