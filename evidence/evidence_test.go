//go:build !nocv

package evidence

import (
	"context"
	"errors"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/physd/physd/frame"
	"github.com/physd/physd/internal/physdtest"
	"github.com/physd/physd/internal/rtspserver"
	"github.com/physd/physd/stream"
)

// cameraFile writes a 4 s test pattern at 25 fps in codec args (e.g.
// libx264 with B-frames and a key picture every 2 s) to name.
func cameraFile(t *testing.T, name string, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Skip("ffmpeg not installed")
	}
	path := filepath.Join(t.TempDir(), name)
	cmd := append([]string{"-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=25:duration=4"}, args...)
	if out, err := exec.Command("ffmpeg", append(cmd, path)...).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v: %s", err, out)
	}
	return path
}

func ffprobe(t *testing.T, path string) physdtest.Probe {
	t.Helper()
	p, err := physdtest.ProbeVideo(path)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// recordRing reads url for d into a ring holding hold, and returns it
// with the arrival of the first unit.
func recordRing(t *testing.T, ctx context.Context, url string, hold, d time.Duration) (*Ring, time.Time) {
	t.Helper()
	ring := NewRing(hold, 0)
	var mu sync.Mutex
	var first time.Time
	src, err := stream.NewRTSPSource(url, stream.RTSPOptions{Preprocess: stream.Preprocess{Size: 32}, Tap: func(u stream.AccessUnit) {
		mu.Lock()
		if first.IsZero() {
			first = u.Wall
		}
		mu.Unlock()
		ring.Add(u)
	}})
	if err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	if err := src.Run(rctx, func(stream.Frame) error { return nil }); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if first.IsZero() {
		t.Fatal("no access unit reached the tap")
	}
	return ring, first
}

// TestClipFromRTSPPackets: a camera's H.264 (B-frames, a key picture
// every 2 s) and VP8 over a loopback RTSP server, tapped for 7 s; a clip
// of [2.5 s, 5.5 s] is cut from the ring and written without
// re-encoding; ffprobe reads it as 3 s (±0.1 s) of 75 frames (±3) for
// H.264 — the edit list hides the pictures back to the key — and
// decodes every picture of both without an error.
func TestClipFromRTSPPackets(t *testing.T) {
	if testing.Short() {
		t.Skip("7 s of real-time stream per codec")
	}
	ctx := context.Background()
	for _, tc := range []struct {
		name, file string
		args       []string
		ext        string
	}{
		{"h264", "cam.mp4", []string{"-c:v", "libx264", "-g", "50", "-bf", "2", "-pix_fmt", "yuv420p"}, ".mp4"},
		{"vp8", "cam.webm", []string{"-c:v", "libvpx", "-g", "50", "-b:v", "300k"}, ".ivf"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := cameraFile(t, tc.file, tc.args...)
			srv, err := rtspserver.Start(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			rtspserver.Publish(ctx, t, srv.URL("cam"), file)
			wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			if err := srv.WaitPublished(wctx, "cam"); err != nil {
				t.Fatal(err)
			}
			ring, first := recordRing(t, ctx, srv.URL("cam"), 30*time.Second, 7*time.Second)
			units, bytes, _ := ring.Stats()
			from, to := first.Add(2500*time.Millisecond), first.Add(5500*time.Millisecond)
			clip, ok := ring.Cut(from, to)
			if !ok {
				t.Fatalf("no clip in a ring of %d units", units)
			}
			if clip.Ext() != tc.ext || !clip.Units[0].Key {
				t.Fatalf("clip of %s: ext %q, starts at a key picture %v", clip.Codec, clip.Ext(), clip.Units[0].Key)
			}
			st := Store{Dir: t.TempDir()}
			f, err := st.Save("cam/alert"+clip.Ext(), clip.Write)
			if err != nil {
				t.Fatal(err)
			}
			p := ffprobe(t, filepath.Join(st.Dir, "cam", "alert"+clip.Ext()))
			start, end := clip.Span()
			t.Logf("%s: ring %d units, %d B; clip %d units from %v before the cut, %s %d B sha256 %s…; ffprobe: %.3f s, %d frames; span %.3f s",
				tc.name, units, bytes, len(clip.Units), from.Sub(clip.Units[0].Wall).Round(time.Millisecond), f.Name, f.Bytes, f.SHA256[:12], p.Duration, p.Frames, end.Sub(start).Seconds())
			if p.Errors != "" {
				t.Errorf("the clip does not decode cleanly: %s", p.Errors)
			}
			if tc.ext == ".mp4" {
				if math.Abs(p.Duration-3) > 0.1 || p.Frames < 72 || p.Frames > 78 {
					t.Errorf("clip of [2.5 s, 5.5 s]: %.3f s, %d frames; want 3 s, 75 frames", p.Duration, p.Frames)
				}
			} else if p.Duration < 2.9 || p.Duration > 5.1 || p.Frames < 72 {
				// IVF has no edit list: from the key picture, at most a
				// group of pictures (2 s) earlier.
				t.Errorf("VP8 clip of [2.5 s, 5.5 s]: %.3f s, %d frames; want 3 to 5 s", p.Duration, p.Frames)
			}
			if sp := end.Sub(start).Seconds(); math.Abs(sp-3) > 0.15 {
				t.Errorf("span %.3f s, want 3", sp)
			}
		})
	}
}

// TestRingHoldsFromAKey: the ring keeps the last key picture at or
// before Hold ago and everything after, drops groups of pictures for its
// byte cap, and starts again with a new session.
func TestRingHoldsFromAKey(t *testing.T) {
	t0 := time.Unix(1000, 0)
	au := func(i int, key bool, session int64) stream.AccessUnit {
		return stream.AccessUnit{Codec: "video/H264", Data: make([]byte, 100), PTS: int64(i) * 3600, Key: key, Wall: t0.Add(time.Duration(i) * 40 * time.Millisecond), Session: session}
	}
	r := NewRing(2*time.Second, 0)
	r.Add(au(0, false, 1)) // before the first key: dropped
	for i := 1; i <= 200; i++ {
		r.Add(au(i, i%25 == 1, 1)) // a key every second
	}
	units, bytes, _ := r.Stats()
	// Newest at 8 s; hold 2 s → from the last key at or before 6 s
	// (frame 126, at 5.04 s).
	if units != 75 || bytes != 7500 {
		t.Errorf("ring of %d units, %d B; want 75 units from the key at 5.04 s", units, bytes)
	}
	c, ok := r.Cut(t0.Add(6500*time.Millisecond), t0.Add(7*time.Second))
	if !ok || c.Units[0].Wall != t0.Add(6040*time.Millisecond) || c.Units[len(c.Units)-1].Wall != t0.Add(7*time.Second) {
		t.Errorf("cut [6.5 s, 7 s]: ok %v, %d units from %v", ok, len(c.Units), c.Units[0].Wall.Sub(t0))
	}
	if _, ok := r.Cut(t0.Add(9*time.Second), t0.Add(10*time.Second)); ok {
		t.Error("a cut after the newest unit is not a clip")
	}
	capped := NewRing(time.Hour, 3000)
	for i := 1; i <= 100; i++ {
		capped.Add(au(i, i%25 == 1, 1))
	}
	if units, bytes, dropped := capped.Stats(); units != 25 || bytes != 2500 || dropped != 75 {
		t.Errorf("capped ring: %d units, %d B, %d dropped; want the last group, 25 units", units, bytes, dropped)
	}
	r.Add(au(0, true, 2))
	if units, _, _ := r.Stats(); units != 1 {
		t.Errorf("a new session: %d units, want 1", units)
	}
}

// TestStoreRetention: Save writes whole files with their SHA-256; Prune
// removes by age, then oldest first beyond the byte cap; names outside
// <camera>/<file> are refused.
func TestStoreRetention(t *testing.T) {
	st := Store{Dir: t.TempDir(), MaxAge: time.Hour, MaxBytes: 2500}
	write := func(n int) func(io.Writer) error {
		return func(w io.Writer) error { _, err := w.Write(make([]byte, n)); return err }
	}
	now := time.Now()
	for i, name := range []string{"a/1.mp4", "a/2.mp4", "b/3.mp4", "b/4.png"} {
		f, err := st.Save(name, write(1000))
		if err != nil {
			t.Fatal(err)
		}
		if f.Bytes != 1000 || f.SHA256 != "541b3e9daa09b20bf85fa273e5cbd3e80185aa4ec298e765db87742b70138a53" {
			t.Fatalf("%s: %d B sha256 %s", name, f.Bytes, f.SHA256)
		}
		mod := now.Add(time.Duration(i-5) * time.Minute)
		if i == 0 {
			mod = now.Add(-2 * time.Hour)
		}
		if err := os.Chtimes(filepath.Join(st.Dir, filepath.FromSlash(name)), mod, mod); err != nil {
			t.Fatal(err)
		}
	}
	removed, err := st.Prune(now)
	if err != nil {
		t.Fatal(err)
	}
	// a/1 is over an hour old; then 3000 B > 2500: a/2, the oldest, goes.
	if strings.Join(removed, ",") != "a/1.mp4,a/2.mp4" {
		t.Errorf("pruned %v, want a/1.mp4 (age) and a/2.mp4 (size)", removed)
	}
	files, _ := st.List()
	if len(files) != 2 || files[0].Name != "b/3.mp4" {
		t.Errorf("left %+v", files)
	}
	for _, bad := range []string{"../x.mp4", "a/../../x", "a/b/c.mp4", "a/.hidden", "x.mp4", "a/"} {
		if _, err := st.Save(bad, write(1)); err == nil {
			t.Errorf("Save(%q) accepted", bad)
		}
	}
}

// TestFrameClipEncoded: a source without packets (20 fps pictures) keeps
// its pictures; a clip of [2 s, 7 s] is encoded by ffmpeg and read by
// ffprobe as 5 s (±0.2 s) of 100 frames (±2), cleanly; a byte cap that
// cannot hold the span at the full rate keeps every k-th picture, and the
// clip keeps its length at a lower rate.
func TestFrameClipEncoded(t *testing.T) {
	if _, err := exec.LookPath("ffprobe"); err != nil {
		t.Skip("ffprobe not installed")
	}
	t0 := time.Unix(2000, 0)
	fill := func(r *FrameRing) {
		for i := range 200 {
			pix := make([]float64, 64*48)
			for j := range pix {
				pix[j] = float64((j%64+i)%64) / 63
			}
			r.Add(frame.Frame{Seq: i, W: 64, H: 48, Pix: pix, Wall: t0.Add(time.Duration(i) * 50 * time.Millisecond)})
		}
	}
	for _, tc := range []struct {
		name     string
		maxBytes int
		frames   int
		every    int
	}{{"full rate", 1 << 20, 100, 1}, {"decimated", 64 * 48 * 40, 20, 5}} {
		// 9 s at 20 fps: 180 pictures, of which 40 fit the second cap.
		r := NewFrameRing(9*time.Second, tc.maxBytes)
		fill(r)
		n, b, every := r.Stats()
		clip, ok := r.Cut(t0.Add(2*time.Second), t0.Add(7*time.Second))
		if !ok {
			t.Fatalf("%s: no clip from a ring of %d pictures", tc.name, n)
		}
		st := Store{Dir: t.TempDir()}
		f, err := st.Save("cam/x.mp4", func(w io.Writer) error { return clip.Write(context.Background(), w) })
		if err != nil {
			t.Fatal(err)
		}
		p := ffprobe(t, filepath.Join(st.Dir, "cam", "x.mp4"))
		t.Logf("%s: ring %d pictures, %d B, every %d; clip %d B: ffprobe %.3f s, %d frames", tc.name, n, b, every, f.Bytes, p.Duration, p.Frames)
		if every != tc.every || math.Abs(p.Duration-5) > 0.2 || math.Abs(float64(p.Frames-tc.frames)) > 2 || p.Errors != "" {
			t.Errorf("%s: every %d, %.3f s, %d frames (%s); want every %d, 5 s, %d frames", tc.name, every, p.Duration, p.Frames, p.Errors, tc.every, tc.frames)
		}
	}
}
