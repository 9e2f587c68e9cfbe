package durable_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// pki is a test CA with a server certificate for 127.0.0.1 and a client
// certificate, as PEM files.
type pki struct {
	caFile, clientCert, clientKey string
	server                        tls.Certificate
	pool                          *x509.CertPool
}

func newPKI(t *testing.T) *pki {
	t.Helper()
	dir := t.TempDir()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "pflow test CA"}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	issue := func(serial int64, usage x509.ExtKeyUsage, ips []net.IP) ([]byte, []byte) {
		key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "pflow test"}, NotBefore: time.Now().Add(-time.Hour),
			NotAfter: time.Now().Add(time.Hour), ExtKeyUsage: []x509.ExtKeyUsage{usage}, IPAddresses: ips, KeyUsage: x509.KeyUsageDigitalSignature}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		kb, _ := x509.MarshalECPrivateKey(key)
		return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
	}
	p := &pki{caFile: filepath.Join(dir, "ca.pem"), clientCert: filepath.Join(dir, "client.pem"), clientKey: filepath.Join(dir, "client.key"), pool: x509.NewCertPool()}
	p.pool.AddCert(ca)
	os.WriteFile(p.caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o644)
	cc, ck := issue(2, x509.ExtKeyUsageClientAuth, nil)
	os.WriteFile(p.clientCert, cc, 0o644)
	os.WriteFile(p.clientKey, ck, 0o600)
	sc, sk := issue(3, x509.ExtKeyUsageServerAuth, []net.IP{net.ParseIP("127.0.0.1")})
	if p.server, err = tls.X509KeyPair(sc, sk); err != nil {
		t.Fatal(err)
	}
	return p
}

// tlsFront terminates mTLS on 127.0.0.1 in front of the real server at
// target (gRPC over HTTP/2, as a TLS load balancer in front of a cluster
// does) and returns its address.
func tlsFront(t *testing.T, p *pki, target string) string {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{p.server}, NextProtos: []string{"h2"},
		ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: p.pool, MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				up, err := net.Dial("tcp", target)
				if err != nil {
					return
				}
				defer up.Close()
				go io.Copy(up, c)
				io.Copy(c, up)
			}()
		}
	}()
	return ln.Addr().String()
}

// TestRunOverMutualTLS: workers and submitters reach a cluster behind mTLS
// with the CA and client certificate from the environment; without them
// the failure says which variable to set.
func TestRunOverMutualTLS(t *testing.T) {
	c := newCluster(t)
	p := newPKI(t)
	addr := tlsFront(t, p, c.srv.HostPort)
	tlsEnv := []string{"PFLOW_TEMPORAL_TLS_CA=" + p.caFile, "PFLOW_TEMPORAL_TLS_CERT=" + p.clientCert, "PFLOW_TEMPORAL_TLS_KEY=" + p.clientKey}
	c.workerOn(t, addr, tlsEnv...)
	hello := repoPath(t, "examples/hello.pflow.md")
	run := func(env []string, args ...string) result {
		t.Helper()
		return c.pflowEnv(t, env, args...)
	}
	r := run(tlsEnv, "--temporal", addr, hello, "name=tls")
	if r.code != 0 || !strings.Contains(r.stdout, "HELLO TLS") {
		t.Fatalf("run over mTLS: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = run(nil, "--temporal", addr, hello, "name=tls")
	if r.code == 0 || !strings.Contains(r.stderr, "If the service uses TLS, set PFLOW_TEMPORAL_TLS=1") {
		t.Errorf("plain text against TLS: exit %d\n%s", r.code, r.stderr)
	}
	r = run(tlsEnv[:1], "--temporal", addr, hello, "name=tls")
	if r.code == 0 || !strings.Contains(r.stderr, "asks for a client certificate (mTLS), set PFLOW_TEMPORAL_TLS_CERT") {
		t.Errorf("no client certificate: exit %d\n%s", r.code, r.stderr)
	}
}
