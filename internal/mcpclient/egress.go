package mcpclient

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/pflow-go/pflow/internal/netpolicy"
	"github.com/pflow-go/pflow/internal/pferr"
)

// Where a remote server's connections may go (docs/security.md, "Remote
// MCP servers"): every connection of a session — the MCP requests, and
// the OAuth requests made for it — goes through a remoteTransport, whose
// every request carries a netpolicy.Guard for the server under the run's
// policy (Server.Network): each address is checked where it is dialled,
// a redirect before it is followed, and the host of a proxied request
// before it goes to the proxy. A connection to the host of the server's
// url with pinned keys ("pin_sha256", "pin_file") fails its TLS handshake,
// before any request is sent, when no certificate of its verified chain
// has one of them.

// pinPrefix starts a pin as curl --pinnedpubkey and HPKP write it.
const pinPrefix = "sha256//"

// parsePins reads the pins of one value of "pin_sha256" or one line of a
// pin_file: "sha256//<base64>" or the bare base64 of a certificate's
// SubjectPublicKeyInfo's SHA-256, several separated by ';' as curl
// allows. It returns the base64 form of each; what is not one is an error
// quoting it.
func parsePins(s string) ([]string, error) {
	var out []string
	for _, p := range strings.Split(s, ";") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		b64 := strings.TrimPrefix(p, pinPrefix)
		sum, err := base64.StdEncoding.DecodeString(b64)
		if err != nil || len(sum) != sha256.Size {
			return nil, fmt.Errorf("%q is not a SHA-256 key pin: write \"sha256//\" and the 44-character base64 of the SHA-256 of the server certificate's public key (SubjectPublicKeyInfo), as curl --pinnedpubkey takes it", p)
		}
		out = append(out, b64)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%q holds no pin", s)
	}
	return out, nil
}

// pinValues returns the strings of a "pin_sha256" value (a string or a
// list of strings); ok is false for any other shape.
func pinValues(v any) (vals []string, ok bool) {
	switch x := v.(type) {
	case string:
		return []string{x}, true
	case []any:
		for _, e := range x {
			s, isStr := e.(string)
			if !isStr {
				return nil, false
			}
			vals = append(vals, s)
		}
		return vals, len(vals) > 0
	}
	return nil, false
}

// loadPins sets s.Pins from an expanded entry's "pin_sha256" and the file
// "pin_file" names. Pins need an https:// url.
func loadPins(s *Server, u *url.URL) error {
	var pins []string
	for _, x := range s.PinSHA256 {
		p, err := parsePins(x)
		if err != nil {
			return pferr.Newf(pferr.Config, "MCP server '%s': pin_sha256: %v", s.Name, err).
				WithHint("Set \"pin_sha256\" to the pin of the server's key, e.g. \"sha256//" + strings.Repeat("A", 43) + "=\" (see docs/mcp.md, Certificate pinning).")
		}
		pins = append(pins, p...)
	}
	if file := s.PinFile; file != "" {
		data, err := os.ReadFile(file)
		if err != nil {
			return pferr.Newf(pferr.Config, "MCP server '%s': cannot read pin_file %s: %v", s.Name, file, errors.Unwrap(err)).
				WithHint("Point \"pin_file\" at a file of pins, one \"sha256//<base64>\" a line.")
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		n, found := 0, 0
		for sc.Scan() {
			n++
			line := strings.TrimSpace(sc.Text())
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			p, err := parsePins(line)
			if err != nil {
				return pferr.Newf(pferr.Config, "MCP server '%s': pin_file %s, line %d: %v", s.Name, file, n, err).
					WithHint("Each line of a pin_file is one pin (\"sha256//<base64>\"); blank lines and lines starting with # are skipped.")
			}
			pins = append(pins, p...)
			found++
		}
		if found == 0 {
			return pferr.Newf(pferr.Config, "MCP server '%s': pin_file %s holds no pin", s.Name, file).
				WithHint("Write the server's pins in it, one \"sha256//<base64>\" a line; or remove \"pin_file\" from its entry.")
		}
	}
	if len(pins) == 0 {
		return nil
	}
	if u.Scheme != "https" {
		return pferr.Newf(pferr.Config, "MCP server '%s' pins its certificate's key (pin_sha256 / pin_file) but its url is not https://", s.Name).
			WithHint("A pin is checked on the TLS handshake: use an https:// url, or remove the pins.")
	}
	slices.Sort(pins)
	s.Pins = slices.Compact(pins)
	return nil
}

// SPKIPin returns the pin of a certificate: the base64 SHA-256 of its
// SubjectPublicKeyInfo, as "pin_sha256" holds it (without "sha256//").
func SPKIPin(c *x509.Certificate) string {
	sum := sha256.Sum256(c.RawSubjectPublicKeyInfo)
	return base64.StdEncoding.EncodeToString(sum[:])
}

// PinError is a TLS handshake refused because no certificate of the
// server's chain has a pinned key.
type PinError struct {
	Server, Host string
	// Pinned are the pins configured; Presented the pins of the chain the
	// server presented, leaf first, with the certificate's subject.
	Pinned, Presented []string
}

func (e *PinError) Error() string {
	return fmt.Sprintf("pflow refused the connection to MCP server '%s' at %s: no certificate it presented has a pinned key, so no request was sent. Pinned (pin_sha256 / pin_file): %s. Presented: %s",
		e.Server, e.Host, strings.Join(prefixed(e.Pinned), ", "), strings.Join(e.Presented, ", "))
}

// Hint says how to update the pin, and when not to.
func (e *PinError) Hint() string {
	leaf := ""
	if len(e.Presented) > 0 {
		leaf, _, _ = strings.Cut(e.Presented[0], " ")
	}
	return fmt.Sprintf("If the server's key changed on purpose (a new certificate with a new key), confirm the new pin with its operator, then set \"pin_sha256\" of server '%s' to it (e.g. \"pin_sha256\": \"%s\", with pflow mcp add, or in its pin_file); keep the old pin next to it until every server has the new key. If nothing changed, someone may be intercepting the connection: do not update the pin.", e.Server, leaf)
}

func prefixed(pins []string) []string {
	out := make([]string, len(pins))
	for i, p := range pins {
		out[i] = pinPrefix + p
	}
	return out
}

// verifyPins is the VerifyConnection of a pinned host: one certificate of
// a verified chain (or, if none was verified, the leaf) must have a
// pinned key. Only the verified chains count: a server may send any
// certificate alongside its own, but only those that sign its leaf are in
// a chain.
func verifyPins(server, host string, pins []string) func(tls.ConnectionState) error {
	return func(cs tls.ConnectionState) error {
		var certs []*x509.Certificate
		for _, chain := range cs.VerifiedChains {
			certs = append(certs, chain...)
		}
		if len(certs) == 0 && len(cs.PeerCertificates) > 0 {
			certs = cs.PeerCertificates[:1]
		}
		var presented []string
		for _, c := range certs {
			p := SPKIPin(c)
			if slices.Contains(pins, p) {
				return nil
			}
			shown := pinPrefix + p + " (" + c.Subject.String() + ")"
			if !slices.Contains(presented, shown) {
				presented = append(presented, shown)
			}
		}
		return &PinError{Server: server, Host: host, Pinned: pins, Presented: presented}
	}
}

// remoteTransport is the transport of a remote server's connections: it
// puts a guard for the server under the run's policy on every request,
// checks a redirect before it is followed, and sends requests to the
// server's own host through the pinned transport when it has pins.
type remoteTransport struct {
	srv    *Server
	base   *http.Transport
	pinned *http.Transport // nil: no pins
	// url is the server's url; host its host:port, the one the pins are
	// for.
	url  *url.URL
	host string
}

// newRemoteTransport returns the transport of one session (or sign-in)
// with srv; CloseIdleConnections when it ends.
func newRemoteTransport(srv *Server) *remoteTransport {
	t := &remoteTransport{srv: srv, base: netpolicy.Transport()}
	if srv.TLS != nil {
		t.base.TLSClientConfig = srv.TLS.Clone()
	}
	if u, err := url.Parse(srv.URL); err == nil && u.Host != "" {
		t.url, t.host = u, hostPort(u)
	}
	if len(srv.Pins) > 0 {
		t.pinned = netpolicy.Transport()
		c := &tls.Config{MinVersion: tls.VersionTLS12}
		if srv.TLS != nil {
			c = srv.TLS.Clone()
		}
		c.VerifyConnection = verifyPins(srv.Name, t.host, srv.Pins)
		t.pinned.TLSClientConfig = c
	}
	return t
}

// hostPort is u's host and port, the port filled in from the scheme.
func hostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "443"
		if u.Scheme == "http" {
			port = "80"
		}
	}
	return net.JoinHostPort(u.Hostname(), port)
}

func (t *remoteTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	g := netpolicy.NewGuard(t.srv.Network, t.srv.Name, r.URL.Hostname())
	ctx := netpolicy.WithGuard(r.Context(), g)
	switch {
	case r.Response != nil && r.Response.Request != nil && r.Response.Request.URL != nil:
		// A hop of a redirect the client follows: checked before it goes
		// (a reused connection is never dialled), and its dial as one.
		if err := g.Redirect(ctx, shownURL(r.Response.Request.URL), r.URL); err != nil {
			return nil, err
		}
	case t.url != nil && !strings.EqualFold(r.URL.Hostname(), t.url.Hostname()):
		// Another host than the server's url names: the server chose it
		// (a legacy SSE endpoint, an OAuth address), so it obeys the rules
		// of a redirect.
		if err := g.Named(ctx, shownURL(t.url), r.URL); err != nil {
			return nil, err
		}
	}
	r = r.WithContext(ctx)
	if t.pinned != nil && r.URL.Scheme == "https" && hostPort(r.URL) == t.host {
		return t.pinned.RoundTrip(r)
	}
	return t.base.RoundTrip(r)
}

// CloseIdleConnections closes the transport's idle connections (at the
// end of the session).
func (t *remoteTransport) CloseIdleConnections() {
	t.base.CloseIdleConnections()
	if t.pinned != nil {
		t.pinned.CloseIdleConnections()
	}
}

// shownURL renders u for messages: no user info, no query, no fragment.
func shownURL(u *url.URL) string {
	c := *u
	c.User = nil
	c.RawQuery, c.ForceQuery = "", false
	c.Fragment, c.RawFragment = "", ""
	return c.String()
}

// egressProblem is the refusal or pin failure err holds (nil: neither).
func egressProblem(err error) error {
	var refused *netpolicy.RefusedError
	if errors.As(err, &refused) {
		return refused
	}
	var pin *PinError
	if errors.As(err, &pin) {
		return pin
	}
	return nil
}
