package wire

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
)

// Environment variables that secure the connection to Temporal (a cluster
// or Temporal Cloud): every worker and submitter reads them.
const (
	// TLSEnv=1 connects with TLS, trusting the system's roots.
	TLSEnv = "PFLOW_TEMPORAL_TLS"
	// TLSCAEnv names a PEM file of the CA that signed the server's
	// certificate (implies TLS).
	TLSCAEnv = "PFLOW_TEMPORAL_TLS_CA"
	// TLSCertEnv and TLSKeyEnv name the PEM client certificate and key for
	// mTLS (imply TLS).
	TLSCertEnv = "PFLOW_TEMPORAL_TLS_CERT"
	TLSKeyEnv  = "PFLOW_TEMPORAL_TLS_KEY"
	// TLSServerNameEnv overrides the name the server's certificate must
	// carry (default: the host of --temporal).
	TLSServerNameEnv = "PFLOW_TEMPORAL_TLS_SERVER_NAME"
)

// TLSFromEnv builds the connection's TLS settings from the environment:
// nil (plain text) when none of the variables is set.
func TLSFromEnv(lookup func(string) (string, bool)) (*tls.Config, error) {
	get := func(k string) string { v, _ := lookup(k); return v }
	on, ca, cert, key, name := get(TLSEnv), get(TLSCAEnv), get(TLSCertEnv), get(TLSKeyEnv), get(TLSServerNameEnv)
	if on == "" && ca == "" && cert == "" && key == "" {
		return nil, nil
	}
	if on == "0" || on == "false" {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: name}
	if ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, fmt.Errorf("%s: cannot read %s: %v", TLSCAEnv, ca, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s: %s holds no PEM certificate", TLSCAEnv, ca)
		}
		cfg.RootCAs = pool
	}
	if (cert == "") != (key == "") {
		return nil, fmt.Errorf("give both %s and %s for a client certificate, or neither", TLSCertEnv, TLSKeyEnv)
	}
	if cert != "" {
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("%s/%s: %v", TLSCertEnv, TLSKeyEnv, err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}
