package mcpclient

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// oauthWorld is an MCP server protected by go-sdk's bearer-token middleware
// and a small authorization server in front of it that does what the demo
// servers of the npm peers do not: refresh tokens, revoking every access
// token at once (an expiry the client cannot see coming), refusing
// refreshes, granting fewer scopes than asked.
type oauthWorld struct {
	mcpURL string
	as     *httptest.Server

	mu            sync.Mutex
	access        map[string]bool
	refresh       map[string]bool
	codes         map[string]string // code -> PKCE challenge
	authorizeHits int
	refreshes     int
	grant         string // scopes granted ("" = as asked)
	n             int
}

func newOAuthWorld(t *testing.T) *oauthWorld {
	t.Helper()
	w := &oauthWorld{access: map[string]bool{}, refresh: map[string]bool{}, codes: map[string]string{}}
	asMux := http.NewServeMux()
	w.as = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "application/json")
		asMux.ServeHTTP(rw, r)
	}))
	t.Cleanup(w.as.Close)
	asMux.HandleFunc("/.well-known/oauth-authorization-server", func(rw http.ResponseWriter, r *http.Request) {
		json.NewEncoder(rw).Encode(map[string]any{
			"issuer": w.as.URL, "authorization_endpoint": w.as.URL + "/authorize", "token_endpoint": w.as.URL + "/token",
			"registration_endpoint": w.as.URL + "/register", "response_types_supported": []string{"code"},
			"grant_types_supported": []string{"authorization_code", "refresh_token"}, "code_challenge_methods_supported": []string{"S256"},
			"token_endpoint_auth_methods_supported": []string{"none"}, "scopes_supported": []string{"tools", "offline_access"},
		})
	})
	asMux.HandleFunc("/register", func(rw http.ResponseWriter, r *http.Request) {
		var m map[string]any
		json.NewDecoder(r.Body).Decode(&m)
		m["client_id"] = "client-1"
		rw.WriteHeader(http.StatusCreated)
		json.NewEncoder(rw).Encode(m)
	})
	asMux.HandleFunc("/authorize", func(rw http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		w.mu.Lock()
		w.authorizeHits++
		w.n++
		code := fmt.Sprintf("code-%d", w.n)
		w.codes[code] = q.Get("code_challenge")
		w.mu.Unlock()
		http.Redirect(rw, r, q.Get("redirect_uri")+"?code="+code+"&state="+q.Get("state"), http.StatusFound)
	})
	asMux.HandleFunc("/token", func(rw http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		w.mu.Lock()
		defer w.mu.Unlock()
		switch r.Form.Get("grant_type") {
		case "authorization_code":
			sum := sha256.Sum256([]byte(r.Form.Get("code_verifier")))
			if w.codes[r.Form.Get("code")] != base64.RawURLEncoding.EncodeToString(sum[:]) {
				rw.WriteHeader(http.StatusBadRequest)
				json.NewEncoder(rw).Encode(map[string]string{"error": "invalid_grant"})
				return
			}
		case "refresh_token":
			if !w.refresh[r.Form.Get("refresh_token")] {
				rw.WriteHeader(http.StatusBadRequest)
				json.NewEncoder(rw).Encode(map[string]string{"error": "invalid_grant"})
				return
			}
			w.refreshes++
		}
		w.n++
		at, rt := fmt.Sprintf("access-%d", w.n), fmt.Sprintf("refresh-%d", w.n)
		w.access[at], w.refresh[rt] = true, true
		scope := w.grant
		if scope == "" {
			scope = "tools"
		}
		json.NewEncoder(rw).Encode(map[string]any{"access_token": at, "token_type": "Bearer", "expires_in": 3600, "refresh_token": rt, "scope": scope})
	})

	srv := mcp.NewServer(&mcp.Implementation{Name: "protected", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "hello"}, func(ctx context.Context, r *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}}, nil, nil
	})
	mux := http.NewServeMux()
	ms := httptest.NewServer(mux)
	t.Cleanup(ms.Close)
	w.mcpURL = ms.URL + "/mcp"
	verify := func(ctx context.Context, token string, r *http.Request) (*auth.TokenInfo, error) {
		w.mu.Lock()
		defer w.mu.Unlock()
		if !w.access[token] {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{Scopes: []string{"tools"}, Expiration: time.Now().Add(time.Hour)}, nil
	}
	prm := ms.URL + "/.well-known/oauth-protected-resource/mcp"
	mux.Handle("/.well-known/oauth-protected-resource/mcp", auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource: w.mcpURL, AuthorizationServers: []string{w.as.URL}, ScopesSupported: []string{"tools"}}))
	mux.Handle("/mcp", auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: prm})(
		mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)))
	return w
}

// expireAccessTokens makes the server refuse every access token issued so
// far (their stored expiry still says they are valid).
func (w *oauthWorld) expireAccessTokens() {
	w.mu.Lock()
	w.access = map[string]bool{}
	w.mu.Unlock()
}

func (w *oauthWorld) revokeRefreshTokens() {
	w.mu.Lock()
	w.refresh = map[string]bool{}
	w.mu.Unlock()
}

func (w *oauthWorld) server(t *testing.T, path string, extra map[string]any) *Server {
	t.Helper()
	cfg := map[string]any{"type": "http", "url": w.mcpURL, "startup_timeout": int64(30)}
	for k, v := range extra {
		cfg[k] = v
	}
	s, err := Resolve("prot", cfg, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	s.TokenFile = path
	return s
}

func follow(ctx context.Context, u string) error {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

func listTools(t *testing.T, s *Server) error {
	t.Helper()
	sess, err := Connect(context.Background(), s, io.Discard)
	if err != nil {
		return err
	}
	defer sess.Close()
	_, err = sess.ListTools(context.Background())
	return err
}

func TestSignInThenRefreshWhenTheServerRefusesTheToken(t *testing.T) {
	w := newOAuthWorld(t)
	path := t.TempDir() + "/oauth/prot.json"

	// No sign-in: a run fails at once, and no browser flow starts.
	err := listTools(t, w.server(t, path, nil))
	if err == nil || !strings.Contains(err.Error(), "Server prot needs sign-in: run 'pflow mcp login prot'") {
		t.Fatalf("without a sign-in: %v", err)
	}
	w.mu.Lock()
	hits := w.authorizeHits
	w.mu.Unlock()
	if hits != 0 {
		t.Fatal("a run started an authorization flow")
	}

	st, err := Login(context.Background(), w.server(t, path, nil), path, LoginOptions{Fetch: follow})
	if err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v %v", info, err)
	}
	first := st.Token.AccessToken

	// Signed in: runs use the token.
	if err := listTools(t, w.server(t, path, nil)); err != nil {
		t.Fatal(err)
	}
	// The server stops accepting it (expired early, or revoked): the run
	// refreshes once, goes on, and stores the new token.
	w.expireAccessTokens()
	if err := listTools(t, w.server(t, path, nil)); err != nil {
		t.Fatalf("after the access token expired: %v", err)
	}
	stored, _ := LoadToken(path)
	w.mu.Lock()
	refreshes := w.refreshes
	w.mu.Unlock()
	if refreshes != 1 || stored.Token.AccessToken == first {
		t.Fatalf("refreshes %d, stored token %q (was %q)", refreshes, stored.Token.AccessToken, first)
	}
	// When the refresh is refused too, the run says to sign in again.
	w.expireAccessTokens()
	w.revokeRefreshTokens()
	err = listTools(t, w.server(t, path, nil))
	if err == nil || !strings.Contains(err.Error(), "needs sign-in") || !strings.Contains(err.Error(), "could not be refreshed") {
		t.Fatalf("with the refresh refused: %v", err)
	}
}

func TestSignInChecksTheScopesTheConfigRequires(t *testing.T) {
	w := newOAuthWorld(t)
	w.grant = "tools"
	path := t.TempDir() + "/prot.json"
	_, err := Login(context.Background(), w.server(t, path, map[string]any{"oauth": map[string]any{"scopes": []any{"tools", "admin"}}}), path, LoginOptions{Fetch: follow})
	if err == nil || !strings.Contains(err.Error(), "granted the scopes tools, but its config requires admin") {
		t.Fatalf("login: %v", err)
	}
	if _, err := os.Stat(path); err == nil {
		t.Fatal("a sign-in without the required scopes was stored")
	}
}

// Any local user can reach the sign-in's loopback callback: a redirect that
// does not carry the state of the authorization URL pflow opened (another
// user's code, sent first) is answered 400 and ignored, and the real
// redirect still signs in.
func TestSignInIgnoresACallbackWithAnotherState(t *testing.T) {
	w := newOAuthWorld(t)
	path := t.TempDir() + "/oauth/prot.json"
	forged := 0
	first := func(ctx context.Context, authURL string) error {
		u, err := url.Parse(authURL)
		if err != nil {
			return err
		}
		cb := u.Query().Get("redirect_uri") + "?code=attacker-code&state=attacker-state"
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, cb, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusBadRequest {
			forged++
		}
		return follow(ctx, authURL)
	}
	st, err := Login(context.Background(), w.server(t, path, nil), path, LoginOptions{Fetch: first})
	if err != nil {
		t.Fatalf("the real redirect after a forged one: %v", err)
	}
	if forged != 1 || st == nil || st.Token == nil || st.Token.AccessToken == "" {
		t.Fatalf("forged callback answered 400: %d; token: %+v", forged, st)
	}
}
