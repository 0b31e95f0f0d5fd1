//go:build !nocv

package stream

import (
	"context"
	"errors"
	"image"
	"io"
	"math"
	"net"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/physd/physd/internal/rtspserver"
	"github.com/physd/physd/sim"
)

// pendulumClip renders a 3 s underdamped pendulum at 20 fps, writes it as
// lossless H.264 and returns the path and the rendered frames.
func pendulumClip(t *testing.T, ctx context.Context) (string, []*image.Gray) {
	t.Helper()
	frames, _, err := sim.Render(ctx, sim.Scene{System: sim.SystemPendulum, Gamma1: 0.08, Gamma0: 4.0016, Z0: 50, V0: -100, Duration: 3, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "pendulum.mp4")
	if err := sim.WriteMP4(ctx, path, frames, 20); err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			t.Skip("ffmpeg not installed")
		}
		t.Fatal(err)
	}
	return path, frames
}

// startPublished starts a loopback RTSP server with path "cam" published
// from file by ffmpeg.
func startPublished(t *testing.T, ctx context.Context, file string) *rtspserver.Server {
	t.Helper()
	srv, err := rtspserver.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	rtspserver.Publish(ctx, t, srv.URL("cam"), file)
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := srv.WaitPublished(wctx, "cam"); err != nil {
		t.Fatal(err)
	}
	return srv
}

func TestRTSPEndToEnd(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	file, clip := pendulumClip(t, ctx)
	srv := startPublished(t, ctx, file)

	const timeout = 2 * time.Second
	pre := Preprocess{Size: 32}
	src, err := NewRTSPSource(srv.URL("cam"), RTSPOptions{Preprocess: pre, Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	if src.Name() != srv.URL("cam") {
		t.Errorf("Name = %q", src.Name())
	}
	var (
		got       []Frame
		arrivals  []time.Time
		pausedAt  time.Time
		start     = time.Now()
	)
	err = src.Run(ctx, func(f Frame) error {
		got = append(got, f)
		arrivals = append(arrivals, time.Now())
		if len(got) == 60 {
			srv.Pause()
			pausedAt = time.Now()
		}
		return nil
	})
	end := time.Now()
	if len(got) == 0 {
		t.Fatalf("no frame: %v", err)
	}
	t.Logf("first frame after %v; %d frames; Run returned %v after the pause: %v", arrivals[0].Sub(start), len(got), end.Sub(pausedAt), err)
	for i, f := range got[:min(len(got), 70)] {
		t.Logf("%d seq %d time %v wall-arrival %v", i, f.Seq, f.Time, arrivals[i].Sub(f.Wall))
	}
	_ = clip
	_ = io.EOF
	_ = math.Abs
	_ = net.Dial
	_ = slices.Sort[[]int]
	_ = strings.Contains
}
