package http

import (
	"errors"
	nethttp "net/http"
	"net/url"
	"strings"

	"github.com/pflow-go/pflow/internal/redact"
)

// maxRedirects is how many redirects one request follows (Go's default).
const maxRedirects = 10

// newClient returns the node's client: it follows redirects, dropping
// credential headers when a redirect leaves the original host.
func newClient(t nethttp.RoundTripper) *nethttp.Client {
	return &nethttp.Client{Transport: t, CheckRedirect: checkRedirect}
}

// credentialsKey keys the request context value that lists which headers of
// this request are credentials (a credentialSet).
type credentialsKey struct{}

// credentialSet holds the canonical names of a request's credential headers.
type credentialSet map[string]bool

// minSecretLen is the shortest input value taken as a secret when it shows
// up in a header (shorter values would match too much).
const minSecretLen = 4

// credentials lists the headers of r that must not follow a redirect to
// another host: credential-like names (isCredentialHeader), the headers set
// from auth_token and api_key, and any header whose value contains one of
// r.secrets (auth_token, api_key, secret-named inputs).
func credentials(r *request) credentialSet {
	out := credentialSet{}
	for name, vals := range r.headers {
		if r.credentialHeaders[name] || isCredentialHeader(name) {
			out[name] = true
			continue
		}
		for _, v := range vals {
			if containsAny(v, r.secrets...) {
				out[name] = true
			}
		}
	}
	return out
}

// inputSecrets returns the values of the run's secret-named inputs: string
// values at the top of shared (where inputs live) whose name matches
// redact.IsSecretKey (api_token, password, ...), at least minSecretLen
// long.
func inputSecrets(shared map[string]any) []string {
	var out []string
	for k, v := range shared {
		if s, ok := v.(string); ok && len(s) >= minSecretLen && redact.IsSecretKey(k) {
			out = append(out, s)
		}
	}
	return out
}

// isCredentialHeader reports whether a header name carries credentials:
// Authorization, Proxy-Authorization, Cookie and every name the project's
// secret rule matches (redact.IsSecretKey: X-API-Key, Api-Key,
// X-Auth-Token, Private-Token, ...), plus any name whose last word is "key"
// (Ocp-Apim-Subscription-Key, X-Key).
func isCredentialHeader(name string) bool {
	lower := strings.ToLower(name)
	switch lower {
	case "authorization", "proxy-authorization", "cookie", "cookie2", "key":
		return true
	}
	return redact.IsSecretKey(name) || strings.HasSuffix(lower, "-key") || strings.HasSuffix(lower, "_key")
}

// checkRedirect follows up to maxRedirects redirects. Once a redirect has
// left the first request's origin — another host or port, or https to
// http — every later request of the chain goes without the credential
// headers and without Referer (which may carry a key in its query). Go
// itself drops only Authorization, Cookie and their proxy forms, and only
// when the new host is not the old one or a subdomain of it (ports and
// scheme ignored).
func checkRedirect(req *nethttp.Request, via []*nethttp.Request) error {
	if len(via) >= maxRedirects {
		return errors.New("stopped after 10 redirects")
	}
	if err := checkRedirectTarget(req.Context(), via[len(via)-1].URL, req.URL); err != nil {
		return err
	}
	first := via[0].URL
	left := leavesOrigin(first, req.URL)
	for _, v := range via[1:] {
		left = left || leavesOrigin(first, v.URL)
	}
	if !left {
		return nil
	}
	creds, _ := req.Context().Value(credentialsKey{}).(credentialSet)
	for name := range req.Header {
		if creds[nethttp.CanonicalHeaderKey(name)] || isCredentialHeader(name) {
			delete(req.Header, name)
		}
	}
	req.Header.Del("Referer")
	return nil
}

// leavesOrigin reports whether a request to to must not carry the
// credentials meant for from: another host name or port, or a downgrade from
// https to http. An upgrade from http to https on the default ports keeps
// the host.
func leavesOrigin(from, to *url.URL) bool {
	if from.Scheme == "https" && to.Scheme != "https" {
		return true
	}
	if !strings.EqualFold(from.Hostname(), to.Hostname()) {
		return true
	}
	if from.Scheme == "http" && to.Scheme == "https" && from.Port() == "" && to.Port() == "" {
		return false
	}
	return effectivePort(from) != effectivePort(to)
}

func effectivePort(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if u.Scheme == "https" {
		return "443"
	}
	return "80"
}
