//go:build !nocv

package daemon

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/physd/physd/config"
	"github.com/physd/physd/stream"
)

// FuzzWHIPRequest throws arbitrary requests at the WHIP routes of a daemon
// with one WHIP camera: whatever the method, headers and body, the answer
// is a 2xx or 4xx with a message, never a 5xx or a panic. Seeds: real
// offers from pion (testdata/offer-*.sdp) and the bad inputs of
// TestWHIPBadInput.
func FuzzWHIPRequest(f *testing.F) {
	for _, name := range []string{"testdata/offer-vp8.sdp", "testdata/offer-h264.sdp"} {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(0), "", "application/sdp", "Bearer tok", b)
		f.Add(uint8(0), "", "application/sdp", "Bearer tok", bytes.ReplaceAll(b, []byte("VP8"), []byte("VP9")))
		f.Add(uint8(0), "", "application/sdp", "Bearer tok", bytes.ReplaceAll(b, []byte("m=video"), []byte("m=audio")))
		f.Add(uint8(0), "", "application/sdp", "Bearer tok", b[:len(b)/2])
	}
	f.Add(uint8(0), "", "application/sdp", "Bearer tok", []byte("v=0\r\nthis is not SDP\r\n"))
	f.Add(uint8(0), "", "application/sdp", "Bearer nope", []byte("v=0\r\n"))
	f.Add(uint8(0), "", "text/plain", "", []byte{})
	f.Add(uint8(1), "/0123", "application/trickle-ice-sdpfrag", "Bearer tok", []byte("a=candidate:1 1 udp 1 127.0.0.1 9 typ host\r\n"))
	f.Add(uint8(2), "/0123", "", "Bearer tok", []byte{})
	f.Add(uint8(3), "", "", "", []byte{})

	rtc, err := stream.NewWebRTC(stream.ICEOptions{Interfaces: []string{"lo"}})
	if err != nil {
		f.Fatal(err)
	}
	defer rtc.Close()
	src, err := stream.NewWHIPSource("phone", rtc, stream.WHIPOptions{Preprocess: stream.Preprocess{Size: 16}})
	if err != nil {
		f.Fatal(err)
	}
	defer src.Close()
	cfg := config.Default()
	cam := whipCamera("phone", "tok", false)
	cfg.Cameras = []config.Camera{cam}
	log := slog.New(slog.DiscardHandler)
	d := &Daemon{cfg: cfg, log: log, lines: map[string]*line{"phone": {cfg: cam, src: src, log: log}}}
	d.metrics = newMetrics(d)
	h := d.routes()
	methods := []string{http.MethodPost, http.MethodPatch, http.MethodDelete, http.MethodOptions, http.MethodGet, "BREW"}

	f.Fuzz(func(t *testing.T, m uint8, suffix, ctype, auth string, body []byte) {
		path := "/whip/phone"
		if rest, ok := strings.CutPrefix(suffix, "/"); ok {
			path += "/" + url.PathEscape(rest)
		}
		req := httptest.NewRequest(methods[int(m)%len(methods)], path, bytes.NewReader(body))
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s %s: %d %s", req.Method, req.URL.Path, rec.Code, rec.Body)
		}
		if rec.Code >= 400 && rec.Body.Len() == 0 && rec.Code != http.StatusMethodNotAllowed {
			t.Fatalf("%s: %d without a message", req.Method, rec.Code)
		}
		src.Close() // a session the input created must not pile up
	})
}
