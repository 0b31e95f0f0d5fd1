//go:build !nocv

package daemon

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// selfSigned writes a certificate for 127.0.0.1 and its key.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "physd test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	c, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(c)
	return certFile, keyFile, pool
}

// TestHTTPSPublishPage serves the publish page and its API over HTTPS, as
// a phone needs; a missing key file stops the daemon with the field named.
func TestHTTPSPublishPage(t *testing.T) {
	cert, key, pool := selfSigned(t)
	cfg := whipConfig(whipCamera("phone", "tok", false))
	cfg.HTTP.TLSCertFile, cfg.HTTP.TLSKeyFile = cert, key
	r := start(t, cfg, t.TempDir())
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	base := "https://" + r.d.HTTPAddr()
	for path, want := range map[string]string{
		"/publish/phone":                   "<html",
		"/api/v1/cameras/phone/publish":    `"whip":"/whip/phone"`,
		"/api/v1/cameras/pendulum/publish": "does not take WHIP",
		"/publish/assets/publish.js":       "getUserMedia",
		"/healthz":                         "ok",
	} {
		req, _ := http.NewRequest(http.MethodGet, base+path, nil)
		req.Header.Set("Authorization", "Bearer tok") // the publish config needs it
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(b), want) {
			t.Errorf("GET %s: %s %.200q, want it to contain %q", path, resp.Status, b, want)
		}
	}
	if resp, err := http.Get("http://" + r.d.HTTPAddr() + "/healthz"); err == nil && resp.StatusCode == http.StatusOK {
		t.Error("plain HTTP answered 200 on the HTTPS port")
	}

	cfg.HTTP.TLSKeyFile = filepath.Join(t.TempDir(), "missing.pem")
	d, err := New(cfg, Options{StateDir: t.TempDir(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := d.Run(ctx, nil); err == nil || !strings.Contains(err.Error(), "tls_key_file") {
		t.Errorf("Run with a missing key: %v, want an error naming http.tls_key_file", err)
	}
}
