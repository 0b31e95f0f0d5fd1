//go:build !nocv

package chaos

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/physd/physd/internal/physdtest"
	"github.com/physd/physd/internal/rtspserver"
	"github.com/physd/physd/sim"
	"github.com/physd/physd/wire"
)

// synthetic are the three synthetic cameras; rtspCam reads the RTSP
// server.
var synthetic = []string{"pend1", "pend2", "pend3"}

const rtspCam = "rtsp"

// streamsConfig is physd's configuration for the four-camera runs.
func streamsConfig(httpPort, natsPort int, rtspAddr string) string {
	return fmt.Sprintf(`log: {level: info, format: json}
http: {listen: "127.0.0.1:%d"}
nats:
  urls: ["nats://127.0.0.1:%d"]
  reconnect_wait: 250ms
  heartbeat: 5s
estimator: {checkpoint_every: 30s}
cameras:
  - {name: pend1, source: {kind: synthetic, synthetic: {seed: 1}}}
  - {name: pend2, source: {kind: synthetic, synthetic: {seed: 2, z0: 40}}}
  - {name: pend3, source: {kind: synthetic, synthetic: {seed: 3, z0: 30}}}
  - {name: rtsp, source: {kind: rtsp, url: "rtsp://%s/cam"}}
`, httpPort, natsPort, rtspAddr)
}

// rtspChild is the RTSP server process with its ffmpeg publisher.
type rtspChild struct {
	proc *physdtest.Process
	stop func() // stops the publisher
}

// startRTSP starts the RTSP server child on addr, publishes clip to it
// with ffmpeg and waits until the server has the stream.
func startRTSP(ctx context.Context, t *testing.T, addr, clip string) rtspChild {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p := physdtest.Start(t, "rtsp-server", self, []string{"-test.run=^$"}, rtspEnv+"="+addr)
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := physdtest.WaitListening(wctx, addr); err != nil {
		t.Fatalf("%v\n%s", err, p.Log.String())
	}
	stop := rtspserver.Publish(ctx, t, "rtsp://"+addr+"/cam", clip)
	for !strings.Contains(p.Log.String(), "published cam") {
		select {
		case <-wctx.Done():
			t.Fatalf("the RTSP server never got the stream:\n%s", p.Log.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	return rtspChild{p, stop}
}

// kill kills the server process, then the publisher (which would exit by
// itself once its connection breaks).
func (c rtspChild) kill() {
	c.proc.Kill()
	c.stop()
}

// pendulumClip writes a 30 s underdamped pendulum video for the RTSP
// camera.
func pendulumClip(ctx context.Context, t *testing.T, dir string) string {
	t.Helper()
	frames, _, err := sim.Render(ctx, sim.Scene{System: sim.SystemPendulum, Gamma1: 0.08, Gamma0: 4.0016, Z0: 50, Duration: 30, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	raw := filepath.Join(dir, "pendulum-sim.mp4")
	if err := sim.WriteMP4(ctx, raw, frames, 20); err != nil {
		t.Fatal(err)
	}
	// A key frame every second, as IP cameras send: a reader that joins
	// mid-stream decodes within a second.
	path := filepath.Join(dir, "pendulum.mp4")
	cmd := exec.CommandContext(ctx, "ffmpeg", "-v", "error", "-nostdin", "-y", "-i", raw,
		"-c:v", "libx264", "-g", "20", "-bf", "0", "-pix_fmt", "yuv420p", path)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v\n%s", err, b)
	}
	return path
}

// windowKey identifies an estimate by camera and window.
func windowKey(camera string, start, end time.Time) string {
	return fmt.Sprintf("%s|%d|%d", camera, start.UnixNano(), end.UnixNano())
}

// produced is every certified estimate physd logged, by window.
func produced(t *testing.T, log *physdtest.Log) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, r := range log.Records("certified estimate") {
		s, err1 := time.Parse(time.RFC3339Nano, r.Str("window_start"))
		e, err2 := time.Parse(time.RFC3339Nano, r.Str("window_end"))
		if err1 != nil || err2 != nil || r.Str("camera") == "" {
			t.Fatalf("certified estimate log line without camera or window: %v", r)
		}
		out[windowKey(r.Str("camera"), s, e)] = true
	}
	return out
}

// received reads every estimate in the JetStream stream: how many
// messages each window has, and whether every Nats-Msg-Id matches its
// window.
func received(ctx context.Context, t *testing.T, url string) map[string]int {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	msgs, err := physdtest.StreamMessages(ctx, nc, "PHYSD_ESTIMATES", "physd.*.estimate")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, m := range msgs {
		e, err := wire.DecodeEstimate(m.Data())
		if err != nil {
			t.Fatalf("estimate %s: %v", m.Subject(), err)
		}
		if id := m.Headers().Get("Nats-Msg-Id"); id != e.ID() {
			t.Errorf("estimate for %s %v: Nats-Msg-Id %q is not its window's", e.Camera, e.WindowStart, id)
		}
		out[windowKey(e.Camera, e.WindowStart, e.WindowEnd)]++
	}
	return out
}

// perCamera counts a metric by camera.
func perCamera(m physdtest.Metrics, name string) map[string]float64 {
	out := map[string]float64{}
	for _, c := range append(slices.Clone(synthetic), rtspCam) {
		out[c] = m.Sum(name, `camera="`+c+`"`)
	}
	return out
}
