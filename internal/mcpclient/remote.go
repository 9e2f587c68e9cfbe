package mcpclient

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"

	"github.com/pflow-go/pflow/internal/pferr"
)

// remoteRules applies the rules for servers reached over the network
// (see docs/decisions.md, "Remote servers and OAuth") to an expanded
// http/sse entry: plain
// http:// only to loopback unless "insecure": true, an optional "ca_file"
// with the CA that signs the server's certificate, and credentials read
// from named environment variables (auth token_env / key_env).
func remoteRules(s *Server, lookup func(string) (string, bool)) error {
	u, err := url.Parse(s.URL)
	if err != nil || u.Host == "" {
		return pferr.Newf(pferr.Config, "MCP server '%s': %q is not a URL", s.Name, s.URL).
			WithHint("Set \"url\" to the server's endpoint, e.g. https://mcp.example.com/mcp.")
	}
	if u.Scheme == "http" && !isLoopbackHost(u.Hostname()) && !s.Insecure {
		return pferr.Newf(pferr.Security, "MCP server '%s' is remote (%s) but uses plain http://: its credentials and data would travel unencrypted", s.Name, u.Host).
			WithHint(fmt.Sprintf("Use https:// in its \"url\"; or, if you accept that, set \"insecure\": true in its entry (pflow mcp add --insecure '{\"%s\": {...}}').", s.Name))
	}
	if ca := s.CAFile; ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return pferr.Newf(pferr.Config, "MCP server '%s': cannot read ca_file %s: %v", s.Name, ca, errors.Unwrap(err)).
				WithHint("Point \"ca_file\" at a PEM file with the CA certificate that signs the server's certificate.")
		}
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return pferr.Newf(pferr.Config, "MCP server '%s': ca_file %s holds no PEM certificate", s.Name, ca).
				WithHint("The file must contain one or more '-----BEGIN CERTIFICATE-----' blocks.")
		}
		s.TLS = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	if err := loadPins(s, u); err != nil {
		return err
	}
	return credentialsFromEnv(s.Name, s.Auth, lookup)
}

// credentialsFromEnv fills an auth entry's token (bearer) or key (api_key)
// from the environment variable its token_env / key_env names, at connect
// time; a variable that is not set is an error naming it.
func credentialsFromEnv(server string, auth *AuthConfig, lookup func(string) (string, bool)) error {
	if auth == nil {
		return nil
	}
	for _, f := range auth.envCredentials() {
		if f.name == "" {
			continue
		}
		v, found := "", false
		if lookup != nil {
			v, found = lookup(f.name)
		}
		if !found || v == "" {
			return pferr.Newf(pferr.Config, "MCP server '%s': auth.%s names %s, which is not set", server, f.envKey, f.name).
				WithHint(fmt.Sprintf("Set it in the environment (export %s=...) or store it for pflow with: pflow settings set-env %s=<value>", f.name, f.name))
		}
		*f.dst = v
		if auth.fromEnv == nil {
			auth.fromEnv = map[string]string{}
		}
		auth.fromEnv[f.key] = v
	}
	return nil
}

func isLoopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// tlsProblem words a certificate failure for a person: which host, what is
// wrong, how to fix it; "" when err is not one.
func tlsProblem(server, rawURL string, err error) string {
	host := rawURL
	if u, perr := url.Parse(rawURL); perr == nil && u.Host != "" {
		host = u.Host
	}
	var unknown x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var invalid x509.CertificateInvalidError
	var verify *tls.CertificateVerificationError
	var pin *PinError
	switch {
	case errors.As(err, &pin):
		return pin.Hint()
	case errors.As(err, &unknown) || (errors.As(err, &verify) && errors.As(verify.Err, &unknown)):
		return fmt.Sprintf("The TLS certificate of %s is signed by an authority this machine does not trust (a self-signed server, or a company proxy). If you trust it, put its CA certificate in a PEM file and set \"ca_file\" in the entry of server '%s'.", host, server)
	case errors.As(err, &hostErr):
		return fmt.Sprintf("The TLS certificate of %s is for another name (%s). Check \"url\" of server '%s'.", host, hostErr.Error(), server)
	case errors.As(err, &invalid):
		return fmt.Sprintf("The TLS certificate of %s is not valid (%s): expired, not yet valid or not for a server. Tell the server's operator.", host, invalid.Error())
	}
	return ""
}
