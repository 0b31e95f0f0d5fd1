//go:build !nocv

package daemon

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/json"
	"image"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/physd/physd/config"
	"github.com/physd/physd/internal/rtspserver"
	"github.com/physd/physd/sim"
	"github.com/physd/physd/stream"
	"github.com/physd/physd/wire"
)

// twoReleases writes an H.264 clip of an underdamped pendulum released
// twice, back to back: 8 s from 50°, then 8 s from −40°. Windows across
// the jump cannot be certified; the others can.
func twoReleases(ctx context.Context, t *testing.T) string {
	t.Helper()
	g1, g0 := sim.GroundTruth(sim.RegimeUnderdamped)
	var frames []*image.Gray
	for _, z0 := range []float64{50, -40} {
		fs, _, err := sim.Render(ctx, sim.Scene{System: sim.SystemPendulum, Gamma1: g1, Gamma0: g0, Z0: z0, Duration: 8, FPS: 20, Size: 64, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		frames = append(frames, fs...)
	}
	clip := filepath.Join(t.TempDir(), "pendulum.mp4")
	if err := sim.WriteMP4(ctx, clip, frames, 20); err != nil {
		t.Fatal(err)
	}
	return clip
}

// publishReleases has ffmpeg publish twoReleases' clip to srv at path
// "cable" in a loop, and returns its URL and a stop (also run at cleanup).
func publishReleases(ctx context.Context, t *testing.T, srv *rtspserver.Server) (string, func()) {
	t.Helper()
	url := srv.URL("cable")
	stop := rtspserver.Publish(ctx, t, url, twoReleases(ctx, t))
	if err := srv.WaitPublished(ctx, "cable"); err != nil {
		t.Fatal(err)
	}
	return url, stop
}

// rtspCamera is a default camera reading url, with a 3 s source timeout.
func rtspCamera(name, url string) config.Camera {
	cam := config.DefaultCamera()
	cam.Name = name
	cam.Source.Kind = config.KindRTSP
	cam.Source.URL = config.NewSecret(url)
	cam.Source.Timeout = 3 * time.Second
	return cam
}

// checkStream waits for certified estimates within the accuracy and at
// least one uncertified window's diagnostic.
func checkStream(t *testing.T, c *collector, timeout time.Duration) {
	t.Helper()
	g1, g0 := sim.GroundTruth(sim.RegimeUnderdamped)
	waitFor(t, timeout, "certified estimates and an uncertified window", func() bool {
		uncertified := 0
		for _, m := range c.kind(wire.KindDiagnostic) {
			var d wire.Diagnostic
			if json.Unmarshal(m.Data, &d) == nil && !d.Certified && d.Verdict != "skipped" {
				uncertified++
			}
		}
		return len(c.kind(wire.KindEstimate)) >= 2 && uncertified >= 1
	})
	for _, e := range estimates(t, c) {
		t.Logf("estimate γ0 %.5f ± %.5f γ1 %.5f ± %.5f (%d frames, readout %s)", e.Gamma0, e.Gamma0Sigma, e.Gamma1, e.Gamma1Sigma, e.Frames, e.Certificate.Readout)
		if math.Abs(e.Gamma0-g0) > 0.005*g0 || math.Abs(e.Gamma1-g1) > math.Max(0.004, 3*e.Gamma1Sigma) {
			t.Errorf("estimate γ0 %.5f γ1 %.5f, want (%.4f, %.2f)", e.Gamma0, e.Gamma1, g0, g1)
		}
	}
	for _, m := range c.kind(wire.KindDiagnostic) {
		var d wire.Diagnostic
		if json.Unmarshal(m.Data, &d) == nil && !d.Certified {
			t.Logf("uncertified window: %s %v", d.Verdict, d.Reasons)
		}
	}
}

// TestFileSourceEndToEnd replays the same recording from a file in real
// time: certified estimates, diagnostics, and the camera ends with the
// file while physd keeps running.
func TestFileSourceEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the daemon")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := testConfig()
	cam := config.DefaultCamera()
	cam.Name = "recording"
	cam.Source.Kind = config.KindFile
	cam.Source.Path = twoReleases(ctx, t)
	cam.Source.Realtime = true
	// Every frame as it comes: windows.bin auto restarts the windows when
	// it first bins, at a time set by how fast the first window is
	// estimated — under the race detector just past the releases' seam,
	// and no window then spans it (the uncertified one this test waits for).
	cam.Window.Bin = 1
	cfg.Cameras = []config.Camera{cam}
	r := start(t, cfg, t.TempDir())
	c := collect(t, r.d)
	checkStream(t, c, 60*time.Second)
	waitFor(t, 30*time.Second, "the file to end", func() bool { return r.d.Statuses()["recording"].State == "ended" })
}

// TestRTSPEndToEnd: a real RTSP server on loopback, ffmpeg publishing an
// underdamped pendulum in a loop as H.264 and, on a second path, as H.265
// (libx265, lossless), physd ingesting both over RTSP and a NATS
// subscriber receiving certified estimates from both cameras within the
// estimator's accuracy, plus diagnostics for windows that were not
// certified (the loop seam jumps the pendulum back to its release). Then
// the H.264 publisher stops: that camera goes offline and physd keeps
// running.
func TestRTSPEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("streams for tens of seconds")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	srv, err := rtspserver.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	url, stopPub := publishReleases(ctx, t, srv)
	h265 := filepath.Join(t.TempDir(), "pendulum-h265.mp4")
	cmd := exec.CommandContext(ctx, "ffmpeg", "-hide_banner", "-nostdin", "-loglevel", "error", "-y", "-i", "file:"+twoReleases(ctx, t),
		"-c:v", "libx265", "-x265-params", "lossless=1:log-level=error:pools=1:frame-threads=1", "-pix_fmt", "yuv420p", "file:"+h265)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v\n%s", err, msg)
	}
	rtspserver.Publish(ctx, t, srv.URL("cable265"), h265)
	if err := srv.WaitPublished(ctx, "cable265"); err != nil {
		t.Fatal(err)
	}

	cfg := testConfig()
	cfg.Cameras = []config.Camera{rtspCamera("cable", url), rtspCamera("cable265", srv.URL("cable265"))}
	r := start(t, cfg, t.TempDir())
	c := collect(t, r.d)
	waitFor(t, 100*time.Second, "a certified estimate from each camera", func() bool {
		seen := map[string]bool{}
		for _, e := range estimates(t, c) {
			seen[e.Camera] = true
		}
		return seen["cable"] && seen["cable265"]
	})
	checkStream(t, c, 30*time.Second)
	// H.264 and H.265 over rtsp:// go through physd's own decoder, which
	// counts rejected frames: a clean stream has the series, at 0.
	m := scrape(t, "http://"+r.d.HTTPAddr())
	for _, cam := range []string{"cable", "cable265"} {
		if v, ok := m[`physd_decode_errors_total{camera="`+cam+`"}`]; !ok || v != 0 {
			t.Errorf("physd_decode_errors_total for %s = %v (present %v), want 0", cam, v, ok)
		}
	}
	// The camera stops sending: physd says so and keeps running.
	stopPub()
	waitFor(t, 30*time.Second, "the camera offline", func() bool {
		st := r.d.Statuses()["cable"]
		return st.State == "offline"
	})
	t.Logf("after the publisher left: %+v", r.d.Statuses()["cable"].Error)
}

// TestRTSPSCameraTLS: two cameras read the same rtsps:// stream, which
// ffmpeg publishes to a real RTSPS server holding a certificate from the
// site's CA. The one configured with that CA (source.tls.ca_file) gets
// frames; the one left on the system's CAs does not, and its status says
// why, naming the certificate's fingerprint to pin.
func TestRTSPSCameraTLS(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	ca := newTestCA(t, "site CA")
	caFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, ca.pem, 0o600); err != nil {
		t.Fatal(err)
	}
	cert := ca.issue(t, "camera", true)
	sum := sha256.Sum256(cert.Certificate[0])
	srv, err := rtspserver.StartTLS(ctx, &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	url, _ := publishReleases(ctx, t, srv)

	cfg := testConfig()
	trusted := rtspCamera("trusted", url)
	trusted.Source.TLS.CAFile = caFile
	cfg.Cameras = []config.Camera{trusted, rtspCamera("untrusted", url)}
	r := start(t, cfg, filepath.Join(dir, "state"))
	waitFor(t, 60*time.Second, "frames from the trusted camera and an error from the other", func() bool {
		st := r.d.Statuses()
		return st["trusted"].Frames >= 40 && st["untrusted"].Error != ""
	})
	st := r.d.Statuses()
	t.Logf("trusted: %s, %d frames; untrusted: %s, %d frames: %s", st["trusted"].State, st["trusted"].Frames,
		st["untrusted"].State, st["untrusted"].Frames, st["untrusted"].Error)
	if st["untrusted"].Frames != 0 {
		t.Errorf("the untrusted camera delivered %d frames, want 0", st["untrusted"].Frames)
	}
	for _, w := range []string{"certificate signed by unknown authority", "tls.fingerprint", stream.Fingerprint(sum[:])} {
		if !strings.Contains(st["untrusted"].Error, w) {
			t.Errorf("the untrusted camera's error %q does not contain %q", st["untrusted"].Error, w)
		}
	}
}

// TestCameraTLSConfig: the CA bundle is read and a bad one is reported at
// its key.
func TestCameraTLSConfig(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.pem")
	if err := os.WriteFile(bad, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	ca := newTestCA(t, "site CA")
	good := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(good, ca.pem, 0o600); err != nil {
		t.Fatal(err)
	}
	if ct, err := cameraTLS(config.SourceTLS{CAFile: good}); err != nil || ct.Roots == nil {
		t.Errorf("good CA file: %+v, %v", ct, err)
	}
	for _, f := range []string{bad, filepath.Join(dir, "missing.pem")} {
		if _, err := cameraTLS(config.SourceTLS{CAFile: f}); err == nil || !strings.HasPrefix(err.Error(), "tls.ca_file: ") || !strings.Contains(err.Error(), f) {
			t.Errorf("CA file %s: %v, want an error naming tls.ca_file and the file", f, err)
		}
	}
}
