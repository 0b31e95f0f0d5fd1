//go:build !nocv

package daemon

import (
	"context"
	"image"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/physd/physd/config"
	"github.com/physd/physd/internal/rtspserver"
	"github.com/physd/physd/sim"
	"github.com/physd/physd/wire"
)

// sideBySide writes an H.264 clip of two pendulums side by side, each on
// its own 64×64 half of a 128×64 picture: left (γ1, γ0) = (0.08, 4.0016),
// right (0.3, 9) — two oscillators of different frequencies in one view.
func sideBySide(ctx context.Context, t *testing.T) (string, [2][2]float64) {
	t.Helper()
	truth := [2][2]float64{{0.08, 4.0016}, {0.3, 9}}
	var halves [2][]*image.Gray
	for i, g := range truth {
		fs, _, err := sim.Render(ctx, sim.Scene{System: sim.SystemPendulum, Gamma1: g[0], Gamma0: g[1], Z0: 50, Duration: 12, FPS: 20, Size: 64, Seed: int64(i + 1)})
		if err != nil {
			t.Fatal(err)
		}
		halves[i] = fs
	}
	frames := make([]*image.Gray, len(halves[0]))
	for k := range frames {
		f := image.NewGray(image.Rect(0, 0, 128, 64))
		for y := range 64 {
			copy(f.Pix[y*128:y*128+64], halves[0][k].Pix[y*halves[0][k].Stride:])
			copy(f.Pix[y*128+64:y*128+128], halves[1][k].Pix[y*halves[1][k].Stride:])
		}
		frames[k] = f
	}
	clip := filepath.Join(t.TempDir(), "two.mp4")
	if err := sim.WriteMP4(ctx, clip, frames, 20); err != nil {
		t.Fatal(err)
	}
	return clip, truth
}

// TestZonesOneDecode: one RTSP camera (gortsplib on loopback, ffmpeg
// publishing H.264) watching two pendulums side by side, configured as two
// zones. Each zone's certified estimates arrive on its own subject
// (physd.<camera>.<zone>.estimate) within the accuracy bar of its own
// pendulum; the stream is read by one RTSP session and decoded once: the
// camera's frame counter on /metrics matches each zone's.
func TestZonesOneDecode(t *testing.T) {
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
	clip, truth := sideBySide(ctx, t)
	stop := rtspserver.Publish(ctx, t, srv.URL("bridge"), clip)
	defer stop()
	if err := srv.WaitPublished(ctx, "bridge"); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig()
	cam := rtspCamera("bridge", srv.URL("bridge"))
	cam.Zones = []config.Zone{
		{Name: "left", ROI: config.ROI{X: 0, Y: 0, W: 64, H: 64}},
		{Name: "right", ROI: config.ROI{X: 64, Y: 0, W: 64, H: 64}},
	}
	cfg.Cameras = []config.Camera{cam}
	r := start(t, cfg, t.TempDir())
	c := collect(t, r.d)
	zones := map[string][2]float64{"left": truth[0], "right": truth[1]}
	waitFor(t, 120*time.Second, "two certified estimates from each zone", func() bool {
		n := map[string]int{}
		for _, e := range estimates(t, c) {
			n[e.Zone]++
		}
		return n["left"] >= 2 && n["right"] >= 2
	})
	for _, m := range c.kind(wire.KindEstimate) {
		e, err := wire.DecodeEstimate(m.Data)
		if err != nil {
			t.Fatal(err)
		}
		g, ok := zones[e.Zone]
		if !ok || e.Camera != "bridge" || m.Subject != wire.Subject("physd", "bridge."+e.Zone, wire.KindEstimate) {
			t.Fatalf("estimate on %s: camera %q zone %q", m.Subject, e.Camera, e.Zone)
		}
		t.Logf("%s: γ0 %.5f ± %.5f γ1 %.5f ± %.5f, readout %s", m.Subject, e.Gamma0, e.Gamma0Sigma, e.Gamma1, e.Gamma1Sigma, e.Certificate.Readout)
		if math.Abs(e.Gamma0-g[1]) > 0.005*g[1] || math.Abs(e.Gamma1-g[0]) > math.Max(0.004, 3*e.Gamma1Sigma) {
			t.Errorf("zone %s: γ0 %.5f γ1 %.5f, want (%.4f, %.2f)", e.Zone, e.Gamma0, e.Gamma1, g[1], g[0])
		}
	}
	// One RTSP session reads the stream; the camera's frames are each
	// zone's frames.
	if rt := srv.ReaderTransports(); len(rt) != 1 {
		t.Errorf("%d RTSP readers (%v), want 1", len(rt), rt)
	}
	m := scrape(t, "http://"+r.d.HTTPAddr())
	decoded := m[`physd_frames_received_total{camera="bridge"}`]
	for _, z := range []string{"left", "right"} {
		got := m[`physd_frames_received_total{camera="bridge.`+z+`"}`]
		if decoded == 0 || got > decoded || got < decoded-2*frameQueue-2 {
			t.Errorf("zone %s: %v frames for the camera's %v decoded", z, got, decoded)
		}
	}
	st := r.d.Statuses()
	if st["bridge.left"].Zone != "left" || st["bridge"].State != "online" {
		t.Errorf("statuses: %+v", st)
	}
}
