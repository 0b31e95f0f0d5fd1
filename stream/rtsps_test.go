//go:build !nocv

package stream

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"math/big"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/bluenviron/gortsplib/v5"
	"github.com/bluenviron/gortsplib/v5/pkg/description"
	"github.com/bluenviron/gortsplib/v5/pkg/format"

	"github.com/pion/webrtc/v4"

	"github.com/physd/physd/internal/rtspserver"
)

// selfSigned returns a camera's self-signed certificate for 127.0.0.1
// (an IP address SAN only), which is also its own CA.
func selfSigned(t *testing.T) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "camera"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// TestRTSPSCertificate: over rtsps:// physd checks the camera's
// certificate. A self-signed one is refused by default, with its
// fingerprint in the error; pinning that fingerprint, trusting it as a CA
// or opting out lets frames through; a wrong pin or a host name the
// certificate does not hold is refused; and a stream physd would have to
// hand to OpenCV, which checks nothing, is refused unless the check is
// switched off.
func TestRTSPSCertificate(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cert := selfSigned(t)
	sum := sha256.Sum256(cert.Certificate[0])
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(leaf)
	other := sha256.Sum256([]byte("another camera"))
	clip := encodeClip(t, webrtc.MimeTypeH264, 64, 48, 30, 10)
	pre := Preprocess{Size: 32}

	// serve starts an RTSPS server publishing clip once a reader plays.
	serve := func(t *testing.T) (*rtspserver.Server, <-chan error) {
		srv, err := rtspserver.StartTLS(ctx, &tls.Config{Certificates: []tls.Certificate{cert}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(srv.Close)
		pubErr := make(chan error, 1)
		go func() { pubErr <- publishAUs(ctx, t, srv, clip, nil) }()
		if err := srv.WaitPublished(ctx, "cam"); err != nil {
			t.Fatal(err)
		}
		return srv, pubErr
	}

	refused := []struct {
		name string
		tls  CameraTLS
		host string // replaces 127.0.0.1 in the URL
		want []string
	}{
		{"system roots", CameraTLS{}, "", []string{Fingerprint(sum[:]), "tls.fingerprint"}},
		{"wrong pin", CameraTLS{Fingerprint: other[:]}, "", []string{Fingerprint(sum[:]), Fingerprint(other[:])}},
		{"name not in the certificate", CameraTLS{Roots: roots}, "localhost", []string{"localhost", Fingerprint(sum[:])}},
	}
	for _, tc := range refused {
		t.Run("refused/"+tc.name, func(t *testing.T) {
			srv, err := rtspserver.StartTLS(ctx, &tls.Config{Certificates: []tls.Certificate{cert}})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			url := srv.URL("cam")
			if tc.host != "" {
				url = strings.Replace(url, "127.0.0.1", tc.host, 1)
			}
			src, err := NewRTSPSource(url, RTSPOptions{Preprocess: pre, Timeout: 2 * time.Second, TLS: tc.tls})
			if err != nil {
				t.Fatal(err)
			}
			got, err := readRTSP(ctx, src, 1)
			t.Logf("%d frames, %v", len(got), err)
			if len(got) != 0 || !errors.Is(err, ErrUntrusted) {
				t.Fatalf("got %d frames and %v, want none and an error wrapping ErrUntrusted", len(got), err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %q", err, w)
				}
			}
		})
	}

	accepted := []struct {
		name string
		tls  CameraTLS
	}{
		{"pinned", CameraTLS{Fingerprint: sum[:]}},
		{"own CA", CameraTLS{Roots: roots}},
		{"unchecked", CameraTLS{InsecureSkipVerify: true}},
	}
	for _, tc := range accepted {
		t.Run("accepted/"+tc.name, func(t *testing.T) {
			srv, pubErr := serve(t)
			src, err := NewRTSPSource(srv.URL("cam"), RTSPOptions{Preprocess: pre, Timeout: 2 * time.Second, TLS: tc.tls})
			if err != nil {
				t.Fatal(err)
			}
			got, err := readRTSP(ctx, src, 10)
			if err != nil || len(got) != 10 {
				t.Fatalf("got %d frames and %v, want 10", len(got), err)
			}
			for _, f := range got {
				checkAgainst(t, f, pre, clip.refs)
			}
			srv.Close()
			<-pubErr
		})
	}

	t.Run("refused/AV1 through OpenCV", func(t *testing.T) {
		srv, err := rtspserver.StartTLS(ctx, &tls.Config{Certificates: []tls.Certificate{cert}})
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Close()
		desc := &description.Session{Medias: []*description.Media{{Type: description.MediaTypeVideo,
			Formats: []format.Format{&format.AV1{PayloadTyp: 96}}}}}
		proto := gortsplib.ProtocolTCP
		pub := &gortsplib.Client{Protocol: &proto, TLSConfig: &tls.Config{InsecureSkipVerify: true}}
		if err := pub.StartRecording(srv.URL("cam"), desc); err != nil {
			t.Fatal(err)
		}
		defer pub.Close()
		src, err := NewRTSPSource(srv.URL("cam"), RTSPOptions{Preprocess: pre, Timeout: 2 * time.Second, TLS: CameraTLS{Fingerprint: sum[:]}})
		if err != nil {
			t.Fatal(err)
		}
		got, err := readRTSP(ctx, src, 1)
		t.Logf("%d frames, %v", len(got), err)
		if len(got) != 0 || !errors.Is(err, ErrUntrusted) || !strings.Contains(err.Error(), "AV1") {
			t.Fatalf("got %d frames and %v, want none and an error wrapping ErrUntrusted naming AV1", len(got), err)
		}
	})
}
