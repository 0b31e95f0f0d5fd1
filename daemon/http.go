package daemon

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/physd/physd/config"
	"github.com/physd/physd/wire"
)

// Defaults of the HTTP endpoint.
const (
	// publishWidth, publishHeight and publishFPS are what the publish page
	// asks a phone's camera for: 640×480 is ten times the estimator's
	// 64-pixel frames (room for a region of interest) and cheap to decode
	// on a board; 30 fps resolves motion up to about 3.75 Hz (8 samples a
	// period).
	publishWidth, publishHeight, publishFPS = 640, 480, 30
	// maxBody bounds request bodies (SDP offers and fragments) of every
	// route; see limitBodies.
	maxBody = 64 << 10
	// maxHeader bounds the request line and headers (net/http answers 431
	// Request Header Fields Too Large above it, give or take its 4 KiB of
	// slack).
	maxHeader = 16 << 10
)

// serveHTTP listens on addr and serves until ctx ends. The listener is
// opened before it returns, so the address is known (port 0 picks one).
func (d *Daemon) serveHTTP(ctx context.Context, hc config.HTTP) (net.Addr, <-chan struct{}, error) {
	var tlsCfg *tls.Config
	if hc.TLSCertFile != "" {
		cert, err := tls.LoadX509KeyPair(hc.TLSCertFile, hc.TLSKeyFile)
		if err != nil {
			return nil, nil, fmt.Errorf("http: http.tls_cert_file/tls_key_file: %w", err)
		}
		tlsCfg = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		if hc.ClientCAFile != "" {
			pool, err := loadCAs(hc.ClientCAFile)
			if err != nil {
				return nil, nil, fmt.Errorf("http: http.client_ca_file: %w", err)
			}
			tlsCfg.ClientCAs, tlsCfg.ClientAuth = pool, tls.RequireAndVerifyClientCert
		}
	}
	ln, err := net.Listen("tcp", hc.Listen)
	if err != nil {
		return nil, nil, fmt.Errorf("http: listen %s: %w", hc.Listen, err)
	}
	if tlsCfg != nil {
		ln = tls.NewListener(ln, tlsCfg)
	}
	h := limitBodies(d.routes())
	if hc.RateLimit > 0 {
		// First of all, so that a flood is refused before any token check.
		h = newRateLimiter(hc.RateLimit, hc.RateBurst, d.log, d.metrics.rejected.WithLabelValues(rejectRateLimit)).handler(h)
	}
	// Outermost, so that the 429 and 413 answers carry them too.
	h = safeHeaders(h)
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 15 * time.Second,
		WriteTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: maxHeader}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			d.log.Error("http server", "err", err)
		}
	}()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	return ln.Addr(), done, nil
}

// loadCAs reads a PEM bundle of CA certificates.
func loadCAs(path string) (*x509.CertPool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("%s: no PEM certificate found", path)
	}
	return pool, nil
}

// routes is physd's HTTP API.
func (d *Daemon) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /whip/{camera}", cors(d.whipPost))
	mux.HandleFunc("OPTIONS /whip/{camera}", cors(d.whipOptions))
	mux.HandleFunc("PATCH /whip/{camera}/{session}", cors(d.whipPatch))
	mux.HandleFunc("DELETE /whip/{camera}/{session}", cors(d.whipDelete))
	mux.HandleFunc("OPTIONS /whip/{camera}/{session}", cors(d.whipOptions))
	mux.HandleFunc("GET /api/v1/cameras/{camera}/publish", d.publishConfig)
	mux.HandleFunc("GET /api/v1/cameras/{camera}/latest", d.latest)
	mux.HandleFunc("POST /api/v1/covariates", d.operator(d.covariatePost))
	mux.HandleFunc("GET /healthz", d.healthz)
	mux.HandleFunc("GET /readyz", d.operator(d.readyz))
	mux.Handle("GET /metrics", d.operator(d.metrics.handler().ServeHTTP))
	d.mu.Lock()
	prof := d.cfg.HTTP.Pprof
	d.mu.Unlock()
	if prof {
		d.pprofRoutes(mux)
	}
	d.webRoutes(mux)
	return mux
}

// safeHeaders sets what every response carries: X-Content-Type-Options:
// nosniff (no browser reads an answer as anything but its Content-Type)
// and Cache-Control: no-store (no cache, shared or the browser's, keeps
// an estimate, a metric or an error). The pages and their assets
// replace the latter with no-cache and their ETag: they hold no data.
func safeHeaders(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Cache-Control", "no-store")
		h.ServeHTTP(w, r)
	})
}

// limitBodies caps the body of every request at maxBody, whichever
// handler reads it (readBody answers 413 when a body is over); a body
// declared longer is refused with 413 before any handler runs.
func limitBodies(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > maxBody {
			w.Header().Set("Connection", "close") // do not read what was refused
			bodyTooLarge(w)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		h.ServeHTTP(w, r)
	})
}

// bodyTooLarge writes 413 Content Too Large.
func bodyTooLarge(w http.ResponseWriter) {
	httpError(w, http.StatusRequestEntityTooLarge, "request body over %d bytes (%d KiB), the most physd accepts", maxBody, maxBody>>10)
}

// cors lets a publisher page served from another origin use WHIP: the
// bearer token, not a cookie, authorises, so any origin may ask.
func cors(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		w.Header().Set("Access-Control-Expose-Headers", "Location, ETag, Accept-Patch")
		h(w, r)
	}
}

// httpError writes a plain-text error: the message is for the person at
// the other end, so it says what was wrong and what is accepted.
func httpError(w http.ResponseWriter, code int, format string, args ...any) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	fmt.Fprintf(w, format+"\n", args...)
}

func writeJSON(w http.ResponseWriter, v any) { writeJSONStatus(w, http.StatusOK, v) }

func writeJSONStatus(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// bearer returns the token of an "Authorization: Bearer" header.
func bearer(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(tok) == "" {
		return "", false
	}
	return strings.TrimSpace(tok), true
}

// tokenDigest is what tokens are compared by: SHA-256 digests, all of one
// length, so that the constant-time comparison takes the same time
// whatever the lengths of the token sent and of the one configured.
func tokenDigest(tok string) [sha256.Size]byte { return sha256.Sum256([]byte(tok)) }

// tokenIs reports whether the request's token (sent says there was one;
// digest is tokenDigest of it) is accepted, a configured token ("" is
// none). The comparison runs, in constant time, in every case.
func tokenIs(digest [sha256.Size]byte, sent bool, accepted string) bool {
	a := tokenDigest(accepted)
	eq := subtle.ConstantTimeCompare(digest[:], a[:]) == 1
	return eq && sent && accepted != ""
}

// sentToken returns the digest of the request's bearer token and whether
// it sent one.
func sentToken(r *http.Request) ([sha256.Size]byte, bool) {
	tok, ok := bearer(r)
	return tokenDigest(tok), ok
}

// unauthorized writes 401. The answer depends on the request only (no
// token, or a token that is not accepted), never on the camera it names
// or on which token it missed.
func unauthorized(w http.ResponseWriter, r *http.Request) {
	if _, ok := bearer(r); !ok {
		w.Header().Set("WWW-Authenticate", `Bearer realm="physd"`)
		httpError(w, http.StatusUnauthorized, "missing bearer token: send \"Authorization: Bearer <token>\"")
		return
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="physd", error="invalid_token"`)
	httpError(w, http.StatusUnauthorized, "invalid bearer token")
}

// authorize checks the request's bearer token against the accepted ones
// (empty ones are skipped; every one is compared) and writes 401 if none
// matches. With no accepted token at all the request passes.
func authorize(w http.ResponseWriter, r *http.Request, accepted ...string) bool {
	digest, sent := sentToken(r)
	configured, ok := false, false
	for _, a := range accepted {
		configured = configured || a != ""
		ok = tokenIs(digest, sent, a) || ok
	}
	if configured && !ok {
		unauthorized(w, r)
		return false
	}
	return true
}

// cameraToken is the token a camera's own clients present (whip: its
// source.token, for its publishers, its publish config and its latest
// results); "" for the other kinds.
func (c *line) cameraToken() string {
	if _, ok := c.whip(); !ok {
		return ""
	}
	return c.cfg.Source.Token.Value()
}

// cameraRoute authorizes a request to a route of one camera
// (/whip/{camera}, /api/v1/cameras/{camera}/publish and …/latest) and
// returns its camera; otherwise it writes 401 or 404 and returns nil.
//
// The token comes first. The request's token is compared, in constant
// time, with http.token and with every camera's own token — all of them,
// whichever camera the path names, so the time taken does not depend on
// it. It admits the request to the path's camera if it is http.token or
// that camera's own token; with no http.token, a camera without a token
// of its own is open (loopback only: the config requires a token
// anywhere else). Only an admitted request learns whether the camera
// exists (404). While any token is configured (http.token or a camera's),
// a request that is not admitted gets the same 401 — status, headers and
// body — whether the camera exists or not, so that without a token no
// camera name can be probed. With no token configured anywhere the API is
// open and an unknown camera is plainly 404.
func (d *Daemon) cameraRoute(w http.ResponseWriter, r *http.Request) *line {
	c, ok := d.admit(r)
	if !ok {
		unauthorized(w, r)
		return nil
	}
	if c == nil {
		httpError(w, http.StatusNotFound, "no camera %q", r.PathValue("camera"))
	}
	return c
}

// admit is cameraRoute's decision: the path's camera (nil if there is
// none) and whether the request may learn about it.
func (d *Daemon) admit(r *http.Request) (*line, bool) {
	name := r.PathValue("camera")
	digest, sent := sentToken(r)
	d.mu.Lock()
	global := d.cfg.HTTP.Token.Value()
	configured := global != ""
	for _, cc := range d.cfg.Cameras {
		configured = configured || (cc.Source.Kind == config.KindWHIP && cc.Source.Token.IsSet())
	}
	admitted := tokenIs(digest, sent, global)
	for key, cam := range d.lines {
		tok := cam.cameraToken()
		configured = configured || tok != ""
		if tokenIs(digest, sent, tok) && key == name {
			admitted = true
		}
	}
	c := d.lines[name]
	d.mu.Unlock()
	if !admitted && global == "" && c != nil && c.cameraToken() == "" {
		admitted = true // open: no token guards this camera
	}
	if !configured {
		return c, true
	}
	if !admitted {
		return nil, false
	}
	return c, true
}

// cameraOr404 returns the running camera named in the path. Only for
// routes whose token was checked already (see cameraRoute).
func (d *Daemon) cameraOr404(w http.ResponseWriter, r *http.Request) *line {
	name := r.PathValue("camera")
	d.mu.Lock()
	c := d.lines[name]
	d.mu.Unlock()
	if c == nil {
		httpError(w, http.StatusNotFound, "no camera %q", name)
	}
	return c
}

// publishInfo is what the publish page needs to know about a camera.
type publishInfo struct {
	Camera string  `json:"camera"`
	WHIP   string  `json:"whip"`
	Width  int     `json:"width"`
	Height int     `json:"height"`
	FPS    int     `json:"fps"`
	ROI    *[4]int `json:"roi"`
}

// publishConfig serves GET /api/v1/cameras/{camera}/publish, what the
// publish page asks for first; it needs http.token or the camera's own
// token, like the rest of the API (see cameraRoute).
func (d *Daemon) publishConfig(w http.ResponseWriter, r *http.Request) {
	c := d.cameraRoute(w, r)
	if c == nil {
		return
	}
	if c.whipOr404(w) == nil {
		return
	}
	info := publishInfo{Camera: c.cfg.Name, WHIP: "/whip/" + c.cfg.Name, Width: publishWidth, Height: publishHeight, FPS: publishFPS}
	if c.cfg.FPS > 0 {
		info.FPS = int(c.cfg.FPS + 0.5)
	}
	if roi := c.cfg.ROI; !roi.IsZero() {
		info.ROI = &[4]int{roi.X, roi.Y, roi.W, roi.H}
	}
	writeJSON(w, info)
}

// latestInfo is a camera's state and its latest results.
type latestInfo struct {
	State      wire.State       `json:"state"`
	Error      string           `json:"error,omitempty"`
	Estimate   *wire.Estimate   `json:"estimate"`
	Diagnostic *wire.Diagnostic `json:"diagnostic"`
}

// operator guards what only operators see (/metrics, /readyz): with
// http.token set (required off loopback) the request must carry it.
func (d *Daemon) operator(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		d.mu.Lock()
		tok := d.cfg.HTTP.Token.Value()
		d.mu.Unlock()
		if !authorize(w, r, tok) {
			return
		}
		h(w, r)
	}
}

// latest serves GET /api/v1/cameras/{camera}/latest, to http.token or
// the camera's own token (see cameraRoute).
func (d *Daemon) latest(w http.ResponseWriter, r *http.Request) {
	c := d.cameraRoute(w, r)
	if c == nil {
		return
	}
	est, diag := c.rec.latest()
	state, errText := c.source.get()
	out := latestInfo{State: state, Error: errText, Estimate: est, Diagnostic: diag}
	writeJSON(w, out)
}
