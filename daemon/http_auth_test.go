//go:build !nocv

package daemon

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/physd/physd/config"
)

// Tokens of the authentication tests (loopback only: any would do, these
// would also pass off loopback).
const (
	authGlobal = "operator-0123456789abcdef"
	authPhone  = "phone-publisher-0123456789"
	authSolo   = "solo-publisher-0123456789"
)

// authClient does one request with a bounded time and returns the status,
// the headers and the body.
func authClient(t *testing.T, method, url, token, ctype, body string) reply {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	return reply{resp.StatusCode, resp.Header, string(b)}
}

// cameraRequest is one request to a route of one camera; path has %s for
// the camera's name.
type cameraRequest struct {
	method, path, ctype, body string
}

// cameraRoutes are the authenticated routes that name a camera, and the
// CORS preflights of WHIP (which carry no token, by the fetch standard).
var (
	cameraRoutes = []cameraRequest{
		{http.MethodPost, "/whip/%s", "application/sdp", "v=0\r\n"},
		{http.MethodPatch, "/whip/%s/session1", "application/trickle-ice-sdpfrag", "a=end-of-candidates\r\n"},
		{http.MethodDelete, "/whip/%s/session1", "", ""},
		{http.MethodGet, "/api/v1/cameras/%s/latest", "", ""},
		{http.MethodGet, "/api/v1/cameras/%s/publish", "", ""},
	}
	preflights = []cameraRequest{
		{http.MethodOptions, "/whip/%s", "", ""},
		{http.MethodOptions, "/whip/%s/session1", "", ""},
	}
)

func (q cameraRequest) do(t *testing.T, base, camera, token string) reply {
	t.Helper()
	return authClient(t, q.method, base+strings.Replace(q.path, "%s", camera, 1), token, q.ctype, q.body)
}

func (q cameraRequest) String() string { return q.method + " " + q.path }

// sameAnswer fails unless a and b have the same status, body and headers
// (all of them but Date).
func sameAnswer(t *testing.T, what string, a, b reply) {
	t.Helper()
	ha, hb := a.header.Clone(), b.header.Clone()
	ha.Del("Date")
	hb.Del("Date")
	if a.code != b.code || a.body != b.body || !maps.EqualFunc(ha, hb, slices.Equal[[]string]) {
		t.Errorf("%s: answers differ:\n%d %v %q\n%d %v %q", what, a.code, ha, a.body, b.code, hb, b.body)
	}
}

// authConfig has http.token, two whip cameras with their own tokens and
// the synthetic pendulum; no rate limit (the tests make many requests).
func authConfig() *config.Config {
	cfg := whipConfig(whipCamera("phone", authPhone, false), whipCamera("solo", authSolo, true))
	cfg.HTTP.Token = config.NewSecret(authGlobal)
	cfg.HTTP.RateLimit = 0
	return cfg
}

// TestHTTPUnknownCameraLikeKnown: without a valid token, every route that
// names a camera answers an unknown camera exactly as it answers a known
// one — 401, same body, same headers — for no token, a wrong token and
// another camera's token; the preflight answers alike without a token.
// With http.token an unknown camera is 404 and a known one is served; a
// camera's own token serves that camera only.
func TestHTTPUnknownCameraLikeKnown(t *testing.T) {
	r := start(t, authConfig(), t.TempDir())
	base := "http://" + r.d.HTTPAddr()

	for _, q := range cameraRoutes {
		for _, tok := range []string{"", "wrong-token", authSolo} {
			unknown := q.do(t, base, "nosuch", tok)
			if unknown.code != http.StatusUnauthorized || unknown.header.Get("WWW-Authenticate") == "" ||
				unknown.header.Get("X-Content-Type-Options") != "nosniff" || unknown.header.Get("Cache-Control") != "no-store" {
				t.Errorf("%s on an unknown camera with token %q: %d %v %q, want 401 with WWW-Authenticate, nosniff, no-store", q, tok, unknown.code, unknown.header, unknown.body)
			}
			// phone: a whip camera; pendulum: a camera without a token of
			// its own (solo's token is another camera's, and solo's own
			// routes admit it).
			for _, known := range []string{"phone", "pendulum"} {
				sameAnswer(t, q.String()+" token "+tok+": nosuch vs "+known, unknown, q.do(t, base, known, tok))
			}
		}
		// The token's absence and its being wrong are told apart, the
		// same way for every camera.
		if got := q.do(t, base, "nosuch", "").body; !strings.Contains(got, "missing bearer token") {
			t.Errorf("%s without a token: %q", q, got)
		}
		if got := q.do(t, base, "nosuch", "wrong-token").body; !strings.Contains(got, "invalid bearer token") {
			t.Errorf("%s with a wrong token: %q", q, got)
		}
	}
	for _, q := range preflights {
		unknown := q.do(t, base, "nosuch", "")
		if unknown.code != http.StatusNoContent || unknown.header.Get("Access-Control-Allow-Headers") == "" {
			t.Errorf("%s preflight on an unknown camera: %d %v", q, unknown.code, unknown.header)
		}
		for _, known := range []string{"phone", "pendulum"} {
			sameAnswer(t, q.String()+": nosuch vs "+known, unknown, q.do(t, base, known, ""))
		}
	}

	// A valid http.token learns that a camera does not exist.
	for _, q := range cameraRoutes {
		if rep := q.do(t, base, "nosuch", authGlobal); rep.code != http.StatusNotFound || !strings.Contains(rep.body, `no camera "nosuch"`) {
			t.Errorf("%s on an unknown camera with http.token: %d %q, want 404", q, rep.code, rep.body)
		}
	}
	// and is served on the known ones: WHIP decides on the request itself.
	for _, tc := range []struct {
		q      cameraRequest
		camera string
		code   int
		msg    string
	}{
		{cameraRoutes[0], "phone", http.StatusUnprocessableEntity, "no video"},
		{cameraRoutes[1], "phone", http.StatusNotFound, "no such session"},
		{cameraRoutes[2], "phone", http.StatusNotFound, "no such session"},
		{cameraRoutes[3], "phone", http.StatusOK, `"state"`},
		{cameraRoutes[4], "phone", http.StatusOK, `"whip":"/whip/phone"`},
		{cameraRoutes[0], "pendulum", http.StatusNotFound, "does not take WHIP"},
		{cameraRoutes[3], "pendulum", http.StatusOK, `"state"`},
		{cameraRoutes[4], "pendulum", http.StatusNotFound, "does not take WHIP"},
	} {
		if rep := tc.q.do(t, base, tc.camera, authGlobal); rep.code != tc.code || !strings.Contains(rep.body, tc.msg) {
			t.Errorf("%s on %s with http.token: %d %q, want %d containing %q", tc.q, tc.camera, rep.code, rep.body, tc.code, tc.msg)
		}
	}
	// A camera's own token serves that camera, and is a wrong token for
	// every other, real or not.
	for _, q := range cameraRoutes[3:] {
		if rep := q.do(t, base, "phone", authPhone); rep.code != http.StatusOK {
			t.Errorf("%s on phone with its token: %d %q, want 200", q, rep.code, rep.body)
		}
		sameAnswer(t, q.String()+" with phone's token: nosuch vs solo", q.do(t, base, "nosuch", authPhone), q.do(t, base, "solo", authPhone))
		sameAnswer(t, q.String()+" with phone's token: nosuch vs pendulum", q.do(t, base, "nosuch", authPhone), q.do(t, base, "pendulum", authPhone))
	}
	// The token is a bearer token: the header's scheme is case-blind, its
	// value must be exact.
	if rep := authClient(t, http.MethodGet, base+"/api/v1/cameras/phone/latest", authGlobal+"x", "", ""); rep.code != http.StatusUnauthorized {
		t.Errorf("latest with http.token and a character more: %d, want 401", rep.code)
	}
	if rep := authClient(t, http.MethodGet, base+"/api/v1/cameras/phone/latest", authGlobal[:len(authGlobal)-1], "", ""); rep.code != http.StatusUnauthorized {
		t.Errorf("latest with http.token less a character: %d, want 401", rep.code)
	}
}

// TestHTTPCameraTokensOnly: with no http.token, the whip cameras' tokens
// still hide which cameras exist (an unknown camera is 401 like a whip
// camera), a camera without a token of its own stays open (loopback), and
// with no token anywhere an unknown camera is plainly 404.
func TestHTTPCameraTokensOnly(t *testing.T) {
	cfg := authConfig()
	cfg.HTTP.Token = config.Secret{}
	r := start(t, cfg, t.TempDir())
	base := "http://" + r.d.HTTPAddr()
	for _, q := range cameraRoutes {
		for _, tok := range []string{"", "wrong-token", authSolo} {
			unknown := q.do(t, base, "nosuch", tok)
			if unknown.code != http.StatusUnauthorized {
				t.Errorf("%s on an unknown camera with token %q: %d %q, want 401", q, tok, unknown.code, unknown.body)
			}
			sameAnswer(t, q.String()+" token "+tok+": nosuch vs phone", unknown, q.do(t, base, "phone", tok))
		}
		if rep := q.do(t, base, "nosuch", authPhone); rep.code != http.StatusUnauthorized {
			t.Errorf("%s on an unknown camera with phone's token: %d, want 401", q, rep.code)
		}
	}
	latest := cameraRoutes[3]
	if rep := latest.do(t, base, "pendulum", ""); rep.code != http.StatusOK {
		t.Errorf("latest of the pendulum (no token guards it): %d %q, want 200", rep.code, rep.body)
	}
	if rep := latest.do(t, base, "phone", authPhone); rep.code != http.StatusOK {
		t.Errorf("latest of phone with its token: %d %q, want 200", rep.code, rep.body)
	}

	open := testConfig()
	open.HTTP.RateLimit = 0
	r2 := start(t, open, t.TempDir())
	base2 := "http://" + r2.d.HTTPAddr()
	if rep := latest.do(t, base2, "nosuch", ""); rep.code != http.StatusNotFound {
		t.Errorf("latest of an unknown camera with no token configured: %d %q, want 404", rep.code, rep.body)
	}
	if rep := latest.do(t, base2, "pendulum", ""); rep.code != http.StatusOK {
		t.Errorf("latest of the pendulum with no token configured: %d %q, want 200", rep.code, rep.body)
	}
}

// TestHTTPPublishConfigNeedsToken: the publish page's discovery route
// needs http.token or the camera's own token, like the rest of /api.
func TestHTTPPublishConfigNeedsToken(t *testing.T) {
	r := start(t, authConfig(), t.TempDir())
	base := "http://" + r.d.HTTPAddr()
	url := base + "/api/v1/cameras/phone/publish"
	for _, tok := range []string{"", "wrong-token", authSolo} {
		if rep := authClient(t, http.MethodGet, url, tok, "", ""); rep.code != http.StatusUnauthorized || strings.Contains(rep.body, "whip") {
			t.Errorf("publish config with token %q: %d %q, want 401 telling nothing", tok, rep.code, rep.body)
		}
	}
	for _, tok := range []string{authGlobal, authPhone} {
		rep := authClient(t, http.MethodGet, url, tok, "", "")
		var info publishInfo
		if rep.code != http.StatusOK || json.Unmarshal([]byte(rep.body), &info) != nil || info.WHIP != "/whip/phone" || info.Width != publishWidth {
			t.Errorf("publish config with a valid token: %d %q", rep.code, rep.body)
		}
	}
}

// TestHTTPSafeHeaders: every response carries X-Content-Type-Options:
// nosniff — JSON, metrics, errors, refusals (401, 404, 405, 413, 429) and
// the pages — and every one but the pages and their assets Cache-Control:
// no-store; the pages keep their content security policy.
func TestHTTPSafeHeaders(t *testing.T) {
	cfg := authConfig()
	r := start(t, cfg, t.TempDir())
	base := "http://" + r.d.HTTPAddr()
	type check struct {
		method, path, token, ctype, body string
		code                             int
		cache                            string // the Cache-Control wanted
	}
	checks := []check{
		{"GET", "/metrics", authGlobal, "", "", 200, "no-store"},
		{"GET", "/metrics", "", "", "", 401, "no-store"},
		{"GET", "/readyz", authGlobal, "", "", 200, "no-store"},
		{"GET", "/healthz", "", "", "", 200, "no-store"},
		{"GET", "/api/v1/dashboard", authGlobal, "", "", 200, "no-store"},
		{"GET", "/api/v1/dashboard", "wrong-token", "", "", 401, "no-store"},
		{"GET", "/api/v1/cameras/phone/latest", authPhone, "", "", 200, "no-store"},
		{"GET", "/api/v1/cameras/phone/publish", authPhone, "", "", 200, "no-store"},
		{"GET", "/api/v1/cameras/nosuch/latest", authGlobal, "", "", 404, "no-store"},
		{"GET", "/api/v1/cameras/nosuch/frame.png", authGlobal, "", "", 404, "no-store"},
		{"POST", "/whip/phone", authPhone, "text/plain", "x", 415, "no-store"},
		{"POST", "/whip/phone", authPhone, "application/sdp", strings.Repeat("a", maxBody+1), 413, "no-store"},
		{"OPTIONS", "/whip/phone", "", "", "", 204, "no-store"},
		{"GET", "/whip/phone", "", "", "", 405, "no-store"},
		{"GET", "/no/such/route", "", "", "", 404, "no-store"},
		{"GET", "/publish/phone", "", "", "", 200, "no-cache"},
		{"GET", "/publish/assets/publish.js", "", "", "", 200, "no-cache"},
		{"GET", "/dashboard", "", "", "", 200, "no-cache"},
	}
	for _, c := range checks {
		rep := authClient(t, c.method, base+c.path, c.token, c.ctype, c.body)
		if rep.code != c.code {
			t.Errorf("%s %s: %d %.200q, want %d", c.method, c.path, rep.code, rep.body, c.code)
		}
		if got := rep.header.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("%s %s: X-Content-Type-Options %q, want nosniff", c.method, c.path, got)
		}
		if got := rep.header.Get("Cache-Control"); got != c.cache {
			t.Errorf("%s %s: Cache-Control %q, want %q", c.method, c.path, got, c.cache)
		}
		if strings.HasPrefix(c.path, "/publish/phone") || c.path == "/dashboard" {
			if csp := rep.header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
				t.Errorf("%s: Content-Security-Policy %q", c.path, csp)
			}
		}
	}

	// 429 from the rate limiter, before any route.
	limited := authConfig()
	limited.HTTP.RateLimit, limited.HTTP.RateBurst = 0.01, 1
	r2 := start(t, limited, t.TempDir())
	base2 := "http://" + r2.d.HTTPAddr()
	authClient(t, http.MethodGet, base2+"/healthz", "", "", "")
	rep := authClient(t, http.MethodGet, base2+"/healthz", "", "", "")
	if rep.code != http.StatusTooManyRequests || rep.header.Get("X-Content-Type-Options") != "nosniff" || rep.header.Get("Cache-Control") != "no-store" {
		t.Errorf("second request over a burst of 1: %d %v, want 429 with nosniff and no-store", rep.code, rep.header)
	}
}
