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

// nearestFrame returns the index of the reference frame closest to f (max
// abs difference) and that difference.
func nearestFrame(f Frame, refs []Frame) (int, float64) {
	best, bestD := -1, math.Inf(1)
	for i, r := range refs {
		d := 0.0
		for k, v := range f.Pix {
			d = math.Max(d, math.Abs(v-r.Pix[k]))
		}
		if d < bestD {
			best, bestD = i, d
		}
	}
	return best, bestD
}

// TestRTSPEndToEnd: ffmpeg publishes a lossless pendulum clip to a
// loopback RTSP server, as H.264 and as H.265 (libx265's defaults: B-frames
// and an open GOP, CRA key frames with leading pictures), and the source
// reads it over TCP until the server hangs.
func TestRTSPEndToEnd(t *testing.T) {
	for _, codec := range []string{"H.264", "H.265"} {
		t.Run(codec, func(t *testing.T) { testRTSPEndToEnd(t, codec) })
	}
}

// h265File re-encodes a video file as lossless H.265 in MP4 with
// libx265's defaults otherwise.
func h265File(t *testing.T, ctx context.Context, file string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "pendulum-h265.mp4")
	cmd := exec.CommandContext(ctx, "ffmpeg", "-hide_banner", "-nostdin", "-loglevel", "error", "-y", "-i", "file:"+file,
		"-c:v", "libx265", "-x265-params", "lossless=1:log-level=error:pools=1:frame-threads=1", "-pix_fmt", "yuv420p", "file:"+out)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v\n%s", err, msg)
	}
	return out
}

func testRTSPEndToEnd(t *testing.T, codec string) {
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	file, clip := pendulumClip(t, ctx)
	if codec == "H.265" {
		file = h265File(t, ctx, file)
	}
	srv := startPublished(t, ctx, file)

	const timeout = 2 * time.Second
	pre := Preprocess{Size: 32}
	src, err := NewRTSPSource(srv.URL("cam"), RTSPOptions{Preprocess: pre, Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	if src.Name() != srv.URL("cam") {
		t.Errorf("Name = %q, want the URL", src.Name())
	}
	const n = 50 // frames before the server hangs
	var (
		got      []Frame
		arrivals []time.Time
		pausedAt time.Time
		start    = time.Now()
	)
	err = src.Run(ctx, func(f Frame) error {
		got = append(got, f)
		arrivals = append(arrivals, time.Now())
		if len(got) == n {
			srv.Pause()
			pausedAt = time.Now()
		}
		return nil
	})
	end := time.Now()
	if len(got) < n {
		t.Fatalf("got %d frames, then %v", len(got), err)
	}
	stall := end.Sub(pausedAt)
	t.Logf("first frame %v after Run started; %d frames; Run returned %v after the server hung: %v",
		arrivals[0].Sub(start).Round(time.Millisecond), len(got), stall.Round(time.Millisecond), err)

	// The hang is detected as a stall, within Timeout + 3 s, naming the source.
	if !errors.Is(err, ErrStalled) || !strings.Contains(err.Error(), src.Name()) {
		t.Errorf("after the server hung, Run returned %v, want ErrStalled naming %s", err, src.Name())
	}
	if stall > timeout+3*time.Second {
		t.Errorf("stall detected after %v, want within %v", stall, timeout+3*time.Second)
	}

	// Sizes, Seq, presentation times 50 ms apart at 20 fps.
	for i, f := range got {
		if f.W != 32 || f.H != 32 || len(f.Pix) != 32*32 {
			t.Fatalf("frame %d is %dx%d with %d pixels", i, f.W, f.H, len(f.Pix))
		}
		if f.Seq != i {
			t.Fatalf("frame %d has Seq %d", i, f.Seq)
		}
		if i == 0 {
			if f.Time != 0 {
				t.Errorf("first frame at Time %v, want 0", f.Time)
			}
			continue
		}
		step := f.Time - got[i-1].Time
		if step <= 0 {
			t.Fatalf("Time not increasing at frame %d: %v after %v", i, f.Time, got[i-1].Time)
		}
		if (step - 50*time.Millisecond).Abs() > 5*time.Millisecond {
			t.Errorf("frame %d: step %v, want 50 ms", i, step)
		}
		// Wall follows Time and never lies in the future.
		if f.Wall.After(arrivals[i]) || f.Wall.Before(got[i-1].Wall) {
			t.Errorf("frame %d: Wall %v is after its arrival or before the previous Wall", i, f.Wall)
		}
	}
	// Once the backlog FFmpeg buffered while probing the stream is drained,
	// frames arrive in real time and Wall − Time stays put (it can only
	// drop, when a frame arrives with less delay than all before it).
	tail := got[n-10 : n-1] // got[n] was drained from the decoder after the hang
	first := tail[0].Wall.Sub(start) - tail[0].Time
	var lat []time.Duration
	for i, f := range tail {
		if d := f.Wall.Sub(start) - f.Time; (d - first).Abs() > 20*time.Millisecond {
			t.Errorf("Wall − Time drifts in steady state: %v, then %v", first, d)
			break
		}
		lat = append(lat, arrivals[n-10+i].Sub(f.Wall).Round(100*time.Microsecond))
	}
	t.Logf("steady state: arrival − Wall %v", lat)

	// The frames are the clip's frames, in order (the publisher loops it).
	refs := make([]Frame, len(clip))
	for i, img := range clip {
		if refs[i], err = pre.ApplyGray(img); err != nil {
			t.Fatal(err)
		}
	}
	prev, worst := -1, 0.0
	for i, f := range got {
		k, d := nearestFrame(f, refs)
		worst = math.Max(worst, d)
		if prev >= 0 && k != (prev+1)%len(refs) {
			t.Errorf("frame %d matches clip frame %d after clip frame %d", i, k, prev)
		}
		prev = k
	}
	t.Logf("largest difference to the nearest clip frame: %.4f", worst)
	if worst > 0.05 {
		t.Errorf("a frame differs from every clip frame by %.3f", worst)
	}
	if tr := srv.ReaderTransports(); len(tr) == 0 || tr[0] != "TCP" {
		t.Errorf("reader transports %v, want TCP", tr)
	}
}

func TestRTSPUDP(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	file, _ := pendulumClip(t, ctx)
	srv := startPublished(t, ctx, file)
	if !srv.UDP() {
		t.Skip("no free UDP port pair for the server")
	}
	src, err := NewRTSPSource(srv.URL("cam"), RTSPOptions{Transport: "udp", Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	stop := errors.New("enough")
	n := 0
	err = src.Run(ctx, func(f Frame) error {
		if n++; n == 10 {
			return stop
		}
		return nil
	})
	if err != stop {
		t.Fatalf("Run = %v after %d frames, want emit's error unchanged", err, n)
	}
	if tr := srv.ReaderTransports(); !slices.Equal(tr, []string{"UDP"}) {
		t.Errorf("reader transports %v, want [UDP]", tr)
	}
}

func TestRTSPUnavailable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// A port with nothing listening: refused at once.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	src, err := NewRTSPSource("rtsp://admin:hunter2@"+addr+"/cam?token=abc123", RTSPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(src.Name(), "hunter2") || strings.Contains(src.Name(), "abc123") || !strings.Contains(src.Name(), addr) {
		t.Errorf("Name = %q", src.Name())
	}
	start := time.Now()
	err = src.Run(ctx, func(Frame) error { return nil })
	took := time.Since(start)
	t.Logf("nothing listening: %v after %v", err, took)
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), addr) || !strings.Contains(err.Error(), "refused") {
		t.Errorf("err = %v, want ErrUnavailable naming %s and the refusal", err, addr)
	}
	if strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "abc123") {
		t.Errorf("the error leaks credentials: %v", err)
	}
	if took > 2*time.Second {
		t.Errorf("took %v to fail", took)
	}

	// A server without that path: refused by the server, fast too.
	srv, err := rtspserver.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	src, err = NewRTSPSource(srv.URL("nothing-here"), RTSPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	err = src.Run(ctx, func(Frame) error { return nil })
	took = time.Since(start)
	t.Logf("unknown path: %v after %v", err, took)
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "nothing-here") {
		t.Errorf("err = %v, want ErrUnavailable naming the URL", err)
	}
	if took > 3*time.Second {
		t.Errorf("took %v to fail", took)
	}
}

// TestRTSPPublisherLeaves checks that a stream that ends (the server closes
// it when its publisher leaves) is reported as ended, not stalled.
func TestRTSPPublisherLeaves(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	file, _ := pendulumClip(t, ctx)
	srv, err := rtspserver.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	stopPublisher := rtspserver.Publish(ctx, t, srv.URL("cam"), file)
	if err := srv.WaitPublished(ctx, "cam"); err != nil {
		t.Fatal(err)
	}
	src, err := NewRTSPSource(srv.URL("cam"), RTSPOptions{Timeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var stoppedAt time.Time
	err = src.Run(ctx, func(f Frame) error {
		if f.Seq == 30 {
			stopPublisher()
			stoppedAt = time.Now()
		}
		return nil
	})
	t.Logf("publisher gone: %v after %v", err, time.Since(stoppedAt))
	if !errors.Is(err, io.EOF) || !errors.Is(err, ErrInterrupted) || Ended(err) || errors.Is(err, ErrStalled) || !strings.Contains(err.Error(), src.Name()) {
		t.Errorf("Run = %v, want an interruption (ErrInterrupted, io.EOF) naming the source", err)
	}
	if d := time.Since(stoppedAt); d > 2*time.Second {
		t.Errorf("took %v to notice the end", d)
	}
}

// TestRTSPHungAtOpen checks that a server that accepts the connection but
// never answers fails the open after OpenTimeout, not FFmpeg's 30 s.
func TestRTSPHungAtOpen(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close() // hold the connection open, say nothing
		}
	}()
	src, err := NewRTSPSource("rtsp://"+l.Addr().String()+"/cam", RTSPOptions{OpenTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	err = src.Run(ctx, func(Frame) error { return nil })
	took := time.Since(start)
	t.Logf("silent server: %v after %v", err, took)
	if !errors.Is(err, ErrStalled) || took > 4*time.Second {
		t.Errorf("Run = %v after %v, want ErrStalled after about OpenTimeout = 1 s", err, took)
	}
}

func TestRTSPCancel(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	file, _ := pendulumClip(t, ctx)
	srv := startPublished(t, ctx, file)
	src, err := NewRTSPSource(srv.URL("cam"), RTSPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rctx, rcancel := context.WithCancel(ctx)
	var canceledAt time.Time
	err = src.Run(rctx, func(f Frame) error {
		if f.Seq == 5 {
			canceledAt = time.Now()
			rcancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want context.Canceled", err)
	}
	if d := time.Since(canceledAt); d > 2*time.Second {
		t.Errorf("Run returned %v after cancel", d)
	}
	// Canceled while the server hangs: the blocked read must not hold Run.
	srv.Pause()
	rctx, rcancel = context.WithCancel(ctx)
	go func() { time.Sleep(300 * time.Millisecond); rcancel() }()
	start := time.Now()
	err = src.Run(rctx, func(Frame) error { return nil })
	if !errors.Is(err, context.Canceled) && !errors.Is(err, ErrStalled) {
		t.Errorf("Run = %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Run took %v to notice the cancellation", d)
	}
}

func TestRTSPOptionErrors(t *testing.T) {
	for _, tc := range []struct {
		url string
		opt RTSPOptions
	}{
		{"http://127.0.0.1/x", RTSPOptions{}},
		{"rtsp:///x", RTSPOptions{}},
		{"rtsp://127.0.0.1:99999/x", RTSPOptions{}},
		{"rtsp://127.0.0.1/x", RTSPOptions{Transport: "sctp"}},
		{"rtsp://127.0.0.1/x", RTSPOptions{Timeout: time.Millisecond}},
		{"rtsp://127.0.0.1/x", RTSPOptions{OpenTimeout: -time.Second}},
		{"rtsp://127.0.0.1/x", RTSPOptions{Preprocess: Preprocess{Size: -1}}},
		{"rtsp://u:secret@127.0.0.1/%zz", RTSPOptions{}},
	} {
		_, err := NewRTSPSource(tc.url, tc.opt)
		if !errors.Is(err, ErrInvalidOption) {
			t.Errorf("NewRTSPSource(%q, %+v) = %v, want ErrInvalidOption", tc.url, tc.opt, err)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("error leaks the password: %v", err)
		}
	}
}
