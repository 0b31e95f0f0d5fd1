package daemon

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// testCA is a throwaway certificate authority for mutual-TLS tests.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newTestCA(t *testing.T, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// issue signs a leaf certificate for a server (127.0.0.1) or a client.
func (ca *testCA) issue(t *testing.T, name string, server bool) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

func writePEM(t *testing.T, dir, name string, c tls.Certificate) (certFile, keyFile string) {
	t.Helper()
	kder, err := x509.MarshalPKCS8PrivateKey(c.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, name+".pem"), filepath.Join(dir, name+".key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Certificate[0]}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// With http.client_ca_file, only clients holding a certificate from that
// CA get an answer: no certificate and a certificate from another CA fail
// the TLS handshake; the right one reaches /readyz and /metrics.
func TestHTTPClientCertificates(t *testing.T) {
	dir := t.TempDir()
	ca, other := newTestCA(t, "physd test CA"), newTestCA(t, "someone else")
	caFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, ca.pem, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig()
	cfg.HTTP.TLSCertFile, cfg.HTTP.TLSKeyFile = writePEM(t, dir, "server", ca.issue(t, "physd", true))
	cfg.HTTP.ClientCAFile = caFile
	r := start(t, cfg, filepath.Join(dir, "state"))
	roots := x509.NewCertPool()
	roots.AddCert(ca.cert)
	get := func(path string, certs ...tls.Certificate) (*http.Response, error) {
		c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: certs, MinVersion: tls.VersionTLS12}}}
		defer c.CloseIdleConnections()
		resp, err := c.Get("https://" + r.d.HTTPAddr() + path)
		if err == nil {
			_ = resp.Body.Close()
		}
		return resp, err
	}
	if resp, err := get("/healthz"); err == nil {
		t.Errorf("no client certificate: status %d, want a failed handshake", resp.StatusCode)
	}
	if resp, err := get("/healthz", other.issue(t, "intruder", false)); err == nil {
		t.Errorf("certificate from another CA: status %d, want a failed handshake", resp.StatusCode)
	}
	good := ca.issue(t, "operator", false)
	for _, p := range []string{"/healthz", "/metrics"} {
		resp, err := get(p, good)
		if err != nil {
			t.Fatalf("%s with the CA's client certificate: %v", p, err)
		}
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s with the CA's client certificate: status %d", p, resp.StatusCode)
		}
	}
}
