//go:build !nocv

package daemon

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"image/png"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/physd/physd/config"
	"github.com/physd/physd/estimator"
	"github.com/physd/physd/stream"
	"github.com/physd/physd/window"
	"github.com/physd/physd/wire"
)

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

// Secrets the dashboard must never send anywhere.
const (
	dashHTTPToken = "dash-http-token-5ecret"
	dashWHIPToken = "whip-token-5ecret"
	dashRTSPPass  = "rtsp-pa55-5ecret"
)

// dashboardConfig is the default synthetic camera with an http.token, a
// whip camera with its own token and an unreachable RTSP camera whose URL
// carries a password: everything the dashboard must keep to itself.
func dashboardConfig() *config.Config {
	cfg := whipConfig(whipCamera("phone", dashWHIPToken, false))
	cfg.HTTP.Token = config.NewSecret(dashHTTPToken)
	cam := config.DefaultCamera()
	cam.Name = "door"
	cam.Source.Kind = config.KindRTSP
	cam.Source.URL = config.NewSecret("rtsp://admin:" + dashRTSPPass + "@127.0.0.1:1/cam")
	cam.Source.Timeout = time.Second
	cfg.Cameras = append(cfg.Cameras, cam)
	return cfg
}

// assertNoSecrets fails if any configured secret appears in text.
func assertNoSecrets(t *testing.T, what string, text []byte) {
	t.Helper()
	for _, s := range []string{dashHTTPToken, dashWHIPToken, dashRTSPPass, "admin:"} {
		if bytes.Contains(text, []byte(s)) {
			t.Errorf("%s contains the secret %q", what, s)
		}
	}
}

func get(t *testing.T, url, token string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return resp, body
}

// sseEvent is one parsed server-sent event.
type sseEvent struct {
	name string
	data []byte
}

// sseStream reads a dashboard event stream in the background.
type sseStream struct {
	resp   *http.Response
	events chan sseEvent
	done   chan error // the read loop's end
	mu     sync.Mutex
	raw    bytes.Buffer // everything received, for the secret check
}

func openStream(ctx context.Context, t *testing.T, url, token string) *sseStream {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("event stream: %v", err)
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		resp.Body.Close()
		t.Fatalf("event stream: %s, Content-Type %q", resp.Status, resp.Header.Get("Content-Type"))
	}
	s := &sseStream{resp: resp, events: make(chan sseEvent, 1024), done: make(chan error, 1)}
	go func() {
		defer resp.Body.Close()
		br := bufio.NewReaderSize(resp.Body, 1<<16)
		var ev sseEvent
		for {
			line, err := br.ReadString('\n')
			s.mu.Lock()
			s.raw.WriteString(line)
			s.mu.Unlock()
			if err != nil {
				s.done <- err
				close(s.events)
				return
			}
			line = strings.TrimRight(line, "\n")
			switch {
			case line == "":
				if ev.data != nil {
					s.events <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, "event: "):
				ev.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				ev.data = append(ev.data, strings.TrimPrefix(line, "data: ")...)
			}
		}
	}()
	return s
}

// next returns the next event called name, skipping others.
func (s *sseStream) next(t *testing.T, name string, timeout time.Duration) sseEvent {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case ev, ok := <-s.events:
			if !ok {
				t.Fatalf("event stream ended waiting for a %q event", name)
			}
			if ev.name == name {
				return ev
			}
		case <-deadline:
			t.Fatalf("no %q event within %v", name, timeout)
		}
	}
}

func (s *sseStream) received() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Clone(s.raw.Bytes())
}

// TestDashboardAPI checks the dashboard's data routes on a running daemon:
// the token is required, the snapshot lists every camera, the event stream
// delivers a finished window with its latents and crossings within a
// bounded time and ends when the client cancels, frames are PNGs, and no
// token or password appears anywhere.
func TestDashboardAPI(t *testing.T) {
	cfg := dashboardConfig()
	// A camera with a region of interest inside a larger frame, for the
	// source picture and the ROI the page draws.
	roi := config.DefaultCamera()
	roi.Name = "roi"
	roi.Source.Synthetic.Size = 96
	roi.ROI = config.ROI{X: 16, Y: 16, W: 64, H: 64}
	cfg.Cameras = append(cfg.Cameras, roi)
	r := start(t, cfg, t.TempDir())
	base := "http://" + r.d.HTTPAddr()

	for _, path := range []string{"/api/v1/dashboard", "/api/v1/dashboard/events", "/api/v1/cameras/pendulum/frame.png", "/api/v1/cameras/pendulum/source.png"} {
		for _, tok := range []string{"", "wrong"} {
			if resp, _ := get(t, base+path, tok); resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("GET %s with token %q: %s, want 401", path, tok, resp.Status)
			}
		}
	}
	// The page is public and holds no data.
	resp, page := get(t, base+"/dashboard", "")
	if resp.StatusCode != http.StatusOK || !bytes.Contains(page, []byte("<!doctype html>")) ||
		!strings.Contains(resp.Header.Get("Content-Security-Policy"), "default-src 'none'") {
		t.Errorf("GET /dashboard: %s, CSP %q", resp.Status, resp.Header.Get("Content-Security-Policy"))
	}
	_, js := get(t, base+"/dashboard/assets/dashboard.js", "")
	assertNoSecrets(t, "the page", append(page, js...))

	waitFor(t, 20*time.Second, "frames from the synthetic cameras", func() bool {
		st := r.d.Statuses()
		return st["pendulum"].Frames > 0 && st["roi"].Frames > 0 && st["door"].State == "offline"
	})
	resp, body := get(t, base+"/api/v1/dashboard", dashHTTPToken)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("snapshot: %s", resp.Status)
	}
	assertNoSecrets(t, "the snapshot", body)
	var snap dashSnapshot
	if err := json.Unmarshal(body, &snap); err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	names := map[string]dashCamera{}
	for _, c := range snap.Cameras {
		names[c.Name] = c
	}
	if len(names) != 4 || names["door"].Display != "offline" || !strings.HasPrefix(names["door"].Source, "rtsp://127.0.0.1:1") {
		t.Errorf("snapshot cameras: %+v", names)
	}
	if c := names["roi"]; c.ROI == nil || *c.ROI != [4]int{16, 16, 64, 64} || c.Size != 64 {
		t.Errorf("roi camera: roi %v size %d", c.ROI, c.Size)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := openStream(ctx, t, base+"/api/v1/dashboard/events", dashHTTPToken)
	first := s.next(t, "snapshot", 5*time.Second)
	if err := json.Unmarshal(first.data, &snap); err != nil || len(snap.Cameras) != 4 {
		t.Errorf("first event: %d cameras, %v", len(snap.Cameras), err)
	}
	var we dashWindowEvent
	deadline := time.Now().Add(40 * time.Second)
	for we.Detail == nil || we.Camera != "pendulum" {
		if time.Now().After(deadline) {
			t.Fatal("no window of the pendulum camera with its detail within 40 s")
		}
		ev := s.next(t, "window", time.Until(deadline))
		we = dashWindowEvent{}
		if err := json.Unmarshal(ev.data, &we); err != nil {
			t.Fatalf("window event: %v", err)
		}
	}
	det := we.Detail
	t.Logf("window event: %s %s γ0 %v γ1 %v, %d clip(s) of %d latents, fitted %v, U [%v, %v], %d levels",
		we.Camera, we.Window.Verdict, we.Window.Gamma0, we.Window.Gamma1, len(det.Latents), len(det.Latents[0]), det.Fitted != nil,
		det.Coverage.Lo, det.Coverage.Hi, len(det.Levels))
	if len(det.Latents) != 1 || len(det.Latents[0]) < 80 || len(det.Latents[0]) > dashMaxPoints ||
		(det.Fitted != nil && len(det.Fitted[0]) != len(det.Latents[0])) || !(det.Dt > 0) || len(det.Levels) == 0 {
		t.Errorf("window detail: %+v", det)
	}
	if we.Window.Verdict == "" || math.IsNaN(float64(we.Window.Gamma0)) || we.Card.Name != "pendulum" {
		t.Errorf("window event: %+v", we.Window)
	}
	crossings := 0
	for _, l := range det.Levels {
		crossings += len(l.Crossings)
	}
	if crossings == 0 {
		t.Error("no level crossings in the window detail")
	}
	st := s.next(t, "status", 5*time.Second)
	var status dashStatus
	if err := json.Unmarshal(st.data, &status); err != nil || len(status.Cameras) != 4 {
		t.Errorf("status event: %v %s", err, st.data)
	}

	// Frames: the estimator's 64×64 and the whole 96×96 source of the
	// roi camera.
	for _, tc := range []struct {
		path string
		w, h int
	}{{"/api/v1/cameras/pendulum/frame.png", 64, 64}, {"/api/v1/cameras/roi/frame.png", 64, 64}, {"/api/v1/cameras/roi/source.png", 96, 96}} {
		resp, body := get(t, base+tc.path, dashHTTPToken)
		img, err := png.Decode(bytes.NewReader(body))
		if resp.StatusCode != http.StatusOK || err != nil || img.Bounds().Dx() != tc.w || img.Bounds().Dy() != tc.h {
			t.Errorf("GET %s: %s, %v, %v", tc.path, resp.Status, err, img)
		}
	}
	if resp, _ := get(t, base+"/api/v1/cameras/door/frame.png", dashHTTPToken); resp.StatusCode != http.StatusNotFound {
		t.Errorf("frame of a camera without frames: %s, want 404", resp.Status)
	}

	// The client goes: the server's handler ends and unsubscribes.
	cancel()
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
		t.Fatal("the event stream did not end after the client cancelled")
	}
	waitFor(t, 5*time.Second, "the server to close the cancelled stream", func() bool { return !r.d.dash.listening() })
	assertNoSecrets(t, "the event stream", s.received())

	// Behind the server's own timeouts (here far shorter than physd's
	// 15 s read and 30 s write timeouts) the stream stays open, and it
	// ends when the daemon stops.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: r.d.routes(), ReadTimeout: 500 * time.Millisecond, WriteTimeout: 500 * time.Millisecond}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	s2 := openStream(context.Background(), t, "http://"+ln.Addr().String()+"/api/v1/dashboard/events", dashHTTPToken)
	s2.next(t, "snapshot", 5*time.Second)
	s2.next(t, "status", 5*time.Second)
	s2.next(t, "status", 5*time.Second) // > 2 s, four times both timeouts
	r.cancel()
	select {
	case err := <-s2.done:
		if !errors.Is(err, io.EOF) {
			t.Logf("stream ended with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the event stream did not end when the daemon stopped")
	}
	assertNoSecrets(t, "the event stream", s2.received())
}

// TestDashboardRingBounded: the history keeps its capacity, oldest first.
func TestDashboardRingBounded(t *testing.T) {
	r := newRing[int](dashHistory)
	for i := range 5000 {
		r.push(i)
		if r.len() > dashHistory {
			t.Fatalf("after %d pushes the ring holds %d > %d", i+1, r.len(), dashHistory)
		}
	}
	got := r.items()
	if len(got) != dashHistory || got[0] != 5000-dashHistory || got[len(got)-1] != 4999 || cap(r.buf) != dashHistory {
		t.Fatalf("ring: %d items from %d to %d, cap %d", len(got), got[0], got[len(got)-1], cap(r.buf))
	}
	for i := 1; i < len(got); i++ {
		if got[i] != got[i-1]+1 {
			t.Fatalf("ring out of order at %d: %v", i, got[i-1:i+1])
		}
	}
	small := newRing[string](3)
	small.push("a")
	small.push("b")
	if s := small.items(); len(s) != 2 || s[0] != "a" || s[1] != "b" {
		t.Errorf("partly filled ring: %v", s)
	}
	for _, v := range []string{"c", "d", "e"} {
		small.push(v)
	}
	if s := strings.Join(small.items(), ""); s != "cde" {
		t.Errorf("ring after wrapping: %q, want cde", s)
	}
}

// TestDashboardHubDropsSlowClient: a stream that does not read is dropped
// once its queue is full, and broadcasting never blocks.
func TestDashboardHubDropsSlowClient(t *testing.T) {
	h := newDashHub(testLogger(t))
	slow, ok := h.subscribe()
	if !ok {
		t.Fatal("subscribe refused")
	}
	fast, _ := h.subscribe()
	done := make(chan struct{})
	go func() {
		for i := 0; i < 10*h.buffer; i++ {
			h.broadcast("window", map[string]int{"i": i})
			select { // the fast client reads everything
			case <-fast.ch:
			default:
			}
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("broadcast blocked on a slow client")
	}
	select {
	case <-slow.gone:
	default:
		t.Error("the slow client was not dropped")
	}
	select {
	case <-fast.gone:
		t.Error("the client that kept up was dropped")
	default:
	}
	h.unsubscribe(fast)
	if h.listening() {
		t.Error("hub still has streams")
	}
	for range h.maxSubs {
		if _, ok := h.subscribe(); !ok {
			t.Fatal("subscribe refused below the limit")
		}
	}
	if _, ok := h.subscribe(); ok {
		t.Error("subscribe accepted beyond the limit")
	}
}

// TestDashboardRedaction: userinfo and configured secrets are removed from
// text bound for the page.
func TestDashboardRedaction(t *testing.T) {
	for in, want := range map[string]string{
		"rtsp://u:p@cam.local:554/s":                    "rtsp://cam.local:554/s",
		"open rtsp://admin:pa@ss@10.0.0.1/x failed":     "open rtsp://10.0.0.1/x failed",
		"whep:http://tok@h:8889/a/whep and rtsp://h2/b": "whep:http://h:8889/a/whep and rtsp://h2/b",
		"no url here":                 "no url here",
		"rtsp://host-only":            "rtsp://host-only",
		`error "rtsp://x:y@h" quoted`: `error "rtsp://h" quoted`,
		"synthetic:pendulum/underdamped/seed=1 user@domain": "synthetic:pendulum/underdamped/seed=1 user@domain",
	} {
		if got := redactUserinfo(in); got != want {
			t.Errorf("redactUserinfo(%q) = %q, want %q", in, got, want)
		}
	}
	cfg := dashboardConfig()
	cd := newCamDash(nil, nil, cfg)
	for _, in := range []string{
		"stream: rtsp://admin:" + dashRTSPPass + "@127.0.0.1:1/cam: refused",
		"the server said " + dashRTSPPass,
		"token " + dashWHIPToken + " and " + dashHTTPToken,
	} {
		assertNoSecrets(t, "cleaned text", []byte(cd.clean(in)))
	}
	var nilDash *camDash
	nilDash.setFrame(stream.Frame{})
	nilDash.setTraining(true)
	nilDash.setAlerting(true)
	if _, ok := nilDash.latestFrame(); ok {
		t.Error("a nil camDash has a frame")
	}
}

// TestDashboardDisplayState: what the badge shows, by precedence.
func TestDashboardDisplayState(t *testing.T) {
	for _, tc := range []struct {
		state                         wire.State
		training, alerting, certified bool
		want                          string
	}{
		{"online", false, false, false, "online"},
		{"online", true, false, false, "training"},
		{"online", true, false, true, "certified"},
		{"online", false, true, true, "alerting"},
		{"offline", false, false, true, "offline"},
		{"offline", false, true, false, "alerting"},
		{"waiting", false, false, false, "waiting"},
		{"ended", true, false, true, "ended"},
	} {
		if got := displayState(tc.state, tc.training, tc.alerting, tc.certified); got != tc.want {
			t.Errorf("displayState(%+v) = %q, want %q", tc, got, tc.want)
		}
	}
}

// TestDashboardDetailBounded: a long multi-clip window is cut to the
// bounds (clips, points per clip, crossings per level) and the crossings
// lie inside the covered interval.
func TestDashboardDetailBounded(t *testing.T) {
	const n, dt = 5000, 0.01
	var lat, fit [][]float64
	for m := range dashMaxClips + 3 {
		z, f := make([]float64, n), make([]float64, n)
		for k := range z {
			tt := float64(k) * dt
			f[k] = math.Exp(-0.05*tt) * math.Cos(2*tt+float64(m))
			z[k] = f[k] + 0.001*math.Sin(37*tt)
		}
		lat, fit = append(lat, z), append(fit, f)
	}
	r := &estimator.Result{Gamma0: 4, Gamma1: 0.1, Sigma0: 0.01, Sigma1: 0.001, Latents: lat, Dt: dt, Loss: 0.02,
		Trajectory: &estimator.TrajectoryFit{Fitted: fit}}
	r.Physics = estimator.Derive(r.Gamma1, r.Gamma0, [2][2]float64{{1e-6, 0}, {0, 1e-4}})
	v := window.Verdict{Status: window.Certified, Certified: true, Coverage: window.Coverage{Holds: true, Lo: -0.5, Hi: 0.5}}
	d := &wire.Diagnostic{Verdict: "certified", Certified: true, Certificate: &v}
	det := dashDetailOf(d, r)
	if len(det.Latents) != dashMaxClips || len(det.Fitted) != dashMaxClips {
		t.Fatalf("%d latent and %d fitted clips, want %d", len(det.Latents), len(det.Fitted), dashMaxClips)
	}
	for i, z := range det.Latents {
		if len(z) > dashMaxPoints || len(z) < dashMaxPoints/2 || len(det.Fitted[i]) != len(z) {
			t.Errorf("clip %d: %d latent, %d fitted points (max %d)", i, len(z), len(det.Fitted[i]), dashMaxPoints)
		}
	}
	if det.Stride != (n+dashMaxPoints-1)/dashMaxPoints || float64(det.Latents[0][1]) != float64(sample(lat[0][det.Stride])) {
		t.Errorf("stride %d, second point %v", det.Stride, det.Latents[0][1])
	}
	if len(det.Levels) != dashLevels {
		t.Fatalf("%d levels, want %d", len(det.Levels), dashLevels)
	}
	for _, l := range det.Levels {
		if !(l.U > -0.5 && l.U < 0.5) || len(l.Crossings) == 0 || len(l.Crossings) > dashMaxCrossings {
			t.Errorf("level %v: %d crossings", l.U, len(l.Crossings))
		}
		for _, c := range l.Crossings {
			if c.Clip >= dashMaxClips || c.T < 0 || c.T > n*dt {
				t.Errorf("crossing %+v outside the clips sent", c)
			}
		}
	}
	// The spectrum: bounded, its peak at the latent's 2 rad/s, the
	// window's modes marked.
	sp := det.Spectrum
	if sp == nil || len(sp.Hz) > dashMaxPoints || len(sp.Hz) != len(sp.Power) {
		t.Fatalf("spectrum %+v", sp)
	}
	top := 0
	for k := range sp.Power {
		if sp.Power[k] > sp.Power[top] {
			top = k
		}
	}
	if f := float64(sp.Hz[top]); math.Abs(f-2/(2*math.Pi)) > 0.05 {
		t.Errorf("spectrum peak at %.3f Hz, want %.3f", f, 2/(2*math.Pi))
	}
	dm := *d
	dm.Modes = []wire.ModeSummary{{Mode: wire.Mode{Label: 1}, Fn: 0.318, Certified: true}, {Mode: wire.Mode{Label: 2}, Fn: 0.9}}
	if got := dashDetailOf(&dm, r).Spectrum.Modes; len(got) != 2 || got[1].Label != 2 || !got[0].Certified || got[1].Certified {
		t.Errorf("spectrum modes %+v", got)
	}
	b, err := json.Marshal(det)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 200<<10 {
		t.Errorf("detail of %d bytes", len(b))
	}
	// Without coverage the levels are the latent's quartiles; a window
	// with no estimate has no detail, and its history entry has nulls.
	v.Coverage = window.Coverage{Lo: math.NaN(), Hi: math.NaN()}
	if det := dashDetailOf(d, r); len(det.Levels) != 3 || det.Coverage.Holds {
		t.Errorf("without coverage: %d levels", len(det.Levels))
	}
	if dashDetailOf(&wire.Diagnostic{Verdict: "skipped"}, nil) != nil {
		t.Error("a skipped window has a detail")
	}
	w := dashWindowOf(&wire.Diagnostic{Verdict: "skipped", Reasons: []string{"behind"}}, nil, nil)
	b, _ = json.Marshal(w)
	if !bytes.Contains(b, []byte(`"gamma0":null`)) || !bytes.Contains(b, []byte(`"reasons":["behind"]`)) {
		t.Errorf("skipped window entry: %s", b)
	}
	w = dashWindowOf(d, r, &wire.EncoderInfo{TrainMS: 12.5, Steps: 10})
	if float64(w.Fn) != r.FreqN || float64(w.Zeta) != r.Zeta || w.TrainMS != 12.5 || w.Loss != 0.02 {
		t.Errorf("window entry: %+v", w)
	}
}
