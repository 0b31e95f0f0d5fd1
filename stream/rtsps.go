package stream

import (
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"strings"

	"github.com/bluenviron/gortsplib/v5/pkg/description"
)

// CameraTLS is how an rtsps:// camera's certificate is checked. The zero
// value trusts the system's certificate authorities and checks the URL's
// host name, as a browser would.
type CameraTLS struct {
	// Roots, when set, are the certificate authorities to trust in place
	// of the system's.
	Roots *x509.CertPool
	// Fingerprint, when set, is the SHA-256 of the camera's own
	// certificate (DER): the certificate is trusted if and only if it is
	// that one, whoever signed it and whatever names it holds. It is how
	// to trust a camera's self-signed certificate.
	Fingerprint []byte
	// InsecureSkipVerify accepts any certificate, as OpenCV's FFmpeg does:
	// the stream is encrypted but anyone on the path can impersonate the
	// camera.
	InsecureSkipVerify bool
}

// Fingerprint formats a SHA-256 certificate fingerprint as openssl prints
// it and the configuration takes it: "sha256:" and 32 colon-separated hex
// bytes.
func Fingerprint(sum []byte) string {
	var b strings.Builder
	b.WriteString("sha256:")
	for i, c := range sum {
		if i > 0 {
			b.WriteByte(':')
		}
		fmt.Fprintf(&b, "%02X", c)
	}
	return b.String()
}

// config returns the client TLS configuration for a camera at host (the
// URL's host, with or without port). Verification runs in
// VerifyConnection, with Go's own check switched off, so that a rejected
// certificate's error can name its fingerprint: what an operator pins.
// refused receives that error, which the RTSP client's own error would
// otherwise bury.
func (c CameraTLS) config(host string, refused func(error)) *tls.Config {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return &tls.Config{
		ServerName:         host,
		MinVersion:         tls.VersionTLS12,
		InsecureSkipVerify: true, // checked by VerifyConnection below
		VerifyConnection: func(cs tls.ConnectionState) error {
			err := c.verify(cs, host)
			if err != nil {
				refused(err)
			}
			return err
		},
	}
}

// verify is the CameraTLS check of the certificates the camera presented.
func (c CameraTLS) verify(cs tls.ConnectionState, host string) error {
	if c.InsecureSkipVerify {
		return nil
	}
	if len(cs.PeerCertificates) == 0 {
		return fmt.Errorf("the camera sent no certificate: %w", ErrUntrusted)
	}
	leaf := cs.PeerCertificates[0]
	sum := sha256.Sum256(leaf.Raw)
	if len(c.Fingerprint) > 0 {
		if !bytes.Equal(sum[:], c.Fingerprint) {
			return fmt.Errorf("the camera's certificate has fingerprint %s, not the configured %s: %w",
				Fingerprint(sum[:]), Fingerprint(c.Fingerprint), ErrUntrusted)
		}
		return nil
	}
	opts := x509.VerifyOptions{Roots: c.Roots, DNSName: host, Intermediates: x509.NewCertPool()}
	for _, ic := range cs.PeerCertificates[1:] {
		opts.Intermediates.AddCert(ic)
	}
	if _, err := leaf.Verify(opts); err != nil {
		return fmt.Errorf("%v; to trust this camera's own certificate, set tls.fingerprint: %s: %w",
			err, Fingerprint(sum[:]), ErrUntrusted)
	}
	return nil
}

// formatNames lists the codecs of a session description's video media,
// for messages.
func formatNames(desc *description.Session) string {
	var names []string
	for _, m := range desc.Medias {
		for _, f := range m.Formats {
			names = append(names, f.Codec())
		}
	}
	if len(names) == 0 {
		return "no video"
	}
	return strings.Join(names, ", ")
}
