package rtspserver

import (
	"context"
	"net"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bluenviron/gortsplib/v5"
	"github.com/bluenviron/gortsplib/v5/pkg/base"
	"github.com/bluenviron/gortsplib/v5/pkg/description"
	"github.com/bluenviron/gortsplib/v5/pkg/format"
	"github.com/pion/rtp"
)

// testClip writes a 1 s 64×48 H.264 clip at 20 fps with ffmpeg.
func testClip(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("ffmpeg")
	if err != nil {
		t.Skip("ffmpeg not installed")
	}
	out := filepath.Join(t.TempDir(), "clip.mp4")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	b, err := exec.CommandContext(ctx, bin, "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", "testsrc=size=64x48:rate=20",
		"-t", "1", "-c:v", "libx264", "-g", "10", "-pix_fmt", "yuv420p", out).CombinedOutput()
	if err != nil {
		t.Fatalf("ffmpeg: %v\n%s", err, b)
	}
	return out
}

// waitFor polls cond until it holds or the timeout passes.
func waitFor(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return cond()
}

func TestRelayPauseResume(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !strings.HasPrefix(s.URL("/cam/"), "rtsp://127.0.0.1:") || !strings.HasSuffix(s.URL("/cam/"), "/cam/") {
		t.Errorf("URL = %q", s.URL("/cam/"))
	}
	t.Logf("listening on %s, UDP %v", s.Addr(), s.UDP())

	Publish(ctx, t, s.URL("cam"), testClip(t))
	if err := s.WaitPublished(ctx, "cam"); err != nil {
		t.Fatal(err)
	}

	u, err := base.ParseURL(s.URL("cam"))
	if err != nil {
		t.Fatal(err)
	}
	tcp := gortsplib.ProtocolTCP
	c := gortsplib.Client{Scheme: u.Scheme, Host: u.Host, Protocol: &tcp,
		OnPacketsLost: func(uint64) {}} // Pause drops packets on purpose
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	// An unknown path is not found.
	missing, _ := base.ParseURL(s.URL("nope"))
	if _, _, err := c.Describe(missing); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("DESCRIBE of an unpublished path: %v", err)
	}

	desc, _, err := c.Describe(u)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.SetupAll(desc.BaseURL, desc.Medias); err != nil {
		t.Fatal(err)
	}
	var packets atomic.Int64
	c.OnPacketRTPAny(func(*description.Media, format.Format, *rtp.Packet) { packets.Add(1) })
	if _, err := c.Play(nil); err != nil {
		t.Fatal(err)
	}
	if !waitFor(5*time.Second, func() bool { return packets.Load() > 5 }) {
		t.Fatalf("only %d packets relayed", packets.Load())
	}

	s.Pause()
	time.Sleep(200 * time.Millisecond) // packets already in flight
	n := packets.Load()
	time.Sleep(700 * time.Millisecond)
	if m := packets.Load(); m != n {
		t.Errorf("paused, yet %d packets arrived", m-n)
	}
	s.Resume()
	if !waitFor(5*time.Second, func() bool { return packets.Load() > n+5 }) {
		t.Errorf("resumed, yet only %d new packets", packets.Load()-n)
	}
	if tr := s.ReaderTransports(); !slices.Equal(tr, []string{"TCP"}) {
		t.Errorf("ReaderTransports = %v, want [TCP]", tr)
	}

	// Closing the server ends the client's session.
	s.Close()
	s.Close()
	errc := make(chan error, 1)
	go func() { errc <- c.Wait() }()
	select {
	case <-errc:
	case <-time.After(5 * time.Second):
		t.Error("the client is still connected 5 s after Close")
	}
}

func TestStartStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	s, err := Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if !waitFor(5*time.Second, func() bool {
		c, err := net.DialTimeout("tcp", s.Addr(), time.Second)
		if err == nil {
			c.Close()
			return false
		}
		return true
	}) {
		t.Error("still accepting connections after ctx was canceled")
	}
}
