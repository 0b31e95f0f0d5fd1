//go:build linux

package browser

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/physd/physd/sim"
)

// feed writes chunks to a Browser's output sink as Chromium would.
func feed(chunks ...string) *Browser {
	b := &Browser{changed: make(chan struct{}), done: make(chan struct{})}
	s := &sink{b}
	for _, c := range chunks {
		_, _ = s.Write([]byte(c))
	}
	return b
}

func TestConsoleParsing(t *testing.T) {
	b := feed(
		"/usr/bin/chromium: 9: [: 25276510208: unexpected operator\n",
		"[367:403:1121/141204.187060:ERROR:dbus/bus.cc:405] Failed to connect to the bus\n",
		// Chromium 156 format, written in two pieces split mid-line.
		`[367:367:1121/141204.719170:INFO:CONSOLE:5] "physd: caps ["video/VP8"]", sou`,
		"rce: http://127.0.0.1:8765/page.html (5)\r\n",
		// Older format, and a message that itself contains the delimiter.
		`[1:1:0101/000000.000000:INFO:CONSOLE(12)] "physd: a "q", source: x", source: http://h/p (12)`+"\n",
		// Not ours: no marker.
		`[367:367:1121/141204.719170:INFO:CONSOLE:7] "other page noise", source: http://h/p (7)`+"\n",
		// A message with a newline spans two output lines.
		`[367:367:1121/141204.719170:INFO:CONSOLE:9] "physd: multi`+"\n",
		`line2", source: http://h/p (9)`+"\n",
		`[367:367:1121/141204.719170:INFO:CONSOLE:10] "physd: last", source: http://h/p (10)`+"\n",
	)
	want := []string{`physd: caps ["video/VP8"]`, `physd: a "q", source: x`, "physd: multi\nline2", "physd: last"}
	if got := b.Console(); !reflect.DeepEqual(got, want) {
		t.Errorf("Console() = %q, want %q", got, want)
	}
	if got := len(b.Log()); got != 8 {
		t.Errorf("Log() has %d lines, want 8", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := b.WaitConsole(ctx, "caps"); err != nil {
		t.Errorf("WaitConsole(caps): %v", err)
	}
	if err := b.WaitConsole(ctx, "never"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("WaitConsole(never) = %v, want deadline exceeded", err)
	}
}

func TestFlags(t *testing.T) {
	f := flags(Options{URL: "http://127.0.0.1:1/x", FakeVideo: "/v.y4m", ExtraFlags: []string{"--mute-audio=0"}}, "/tmp/d")
	if f[len(f)-1] != "http://127.0.0.1:1/x" || f[len(f)-2] != "--mute-audio=0" {
		t.Errorf("flags end with %q, want extra flags then the URL", f[len(f)-2:])
	}
	for _, want := range []string{"--headless=new", "--use-file-for-fake-video-capture=/v.y4m", "--user-data-dir=/tmp/d/profile"} {
		if !slices.Contains(f, want) {
			t.Errorf("flags lack %s", want)
		}
	}
}

func TestLaunchErrors(t *testing.T) {
	ctx := context.Background()
	if _, err := Launch(ctx, Options{URL: "about:blank", Binary: "/nonexistent/chromium"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing binary: err = %v, want ErrNotFound", err)
	}
	notY4M := filepath.Join(t.TempDir(), "x.y4m")
	if err := os.WriteFile(notY4M, []byte("not a video file"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Launch(ctx, Options{URL: "about:blank", FakeVideo: notY4M}); err == nil || !strings.Contains(err.Error(), "YUV4MPEG2") {
		t.Errorf("bad y4m: err = %v", err)
	}
	if _, err := Launch(ctx, Options{}); err == nil {
		t.Error("empty URL accepted")
	}
}

// probePage reports the fake camera's settings, the video send codecs and
// the frame rate actually delivered over 4 s, longer than the 3 s clip, so
// a fake device that did not loop the file would stall and fail the count.
const probePage = `<!doctype html><title>probe</title><video id=v muted playsinline></video><script>
(async () => {
  try {
    const codecs = RTCRtpSender.getCapabilities("video").codecs.map(c => (c.mimeType + " " + (c.sdpFmtpLine || "")).trim());
    console.log("physd: codecs " + JSON.stringify(codecs));
    const s = await navigator.mediaDevices.getUserMedia({video: true});
    const {width, height, frameRate} = s.getVideoTracks()[0].getSettings();
    console.log("physd: settings " + JSON.stringify({width, height, frameRate}));
    const v = document.getElementById("v");
    v.srcObject = s;
    await v.play();
    let n = 0, t0 = 0;
    const tick = (now) => {
      if (n++ === 0) t0 = now;
      if (now - t0 < 4000) v.requestVideoFrameCallback(tick);
      else console.log("physd: frames " + JSON.stringify({frames: n - 1, seconds: (now - t0) / 1000}));
    };
    v.requestVideoFrameCallback(tick);
  } catch (e) {
    console.log("physd: error " + e);
  }
})();
</script>`

// launch serves page on 127.0.0.1 and opens it in Chromium; both are shut
// down by t.Cleanup, which also checks that no Chromium process is left.
func launch(t *testing.T, ctx context.Context, page, fakeVideo string) *Browser {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(page))
	}))
	t.Cleanup(srv.Close)
	b, err := Launch(ctx, Options{URL: srv.URL + "/probe", FakeVideo: fakeVideo})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Error(err)
		}
		if left := b.processes(); len(left) > 0 {
			t.Errorf("chromium processes left after Close: %v", left)
		}
		if _, err := os.Stat(b.dir); !os.IsNotExist(err) {
			t.Errorf("profile dir %s not removed (%v)", b.dir, err)
		}
		if t.Failed() {
			t.Logf("chromium output:\n%s", strings.Join(lastN(b.Log(), 60), "\n"))
		}
	})
	return b
}

// consoleJSON waits for the message "physd: NAME {json}" and decodes it.
func consoleJSON(t *testing.T, ctx context.Context, b *Browser, name string, v any) {
	t.Helper()
	prefix := "physd: " + name + " "
	if err := b.WaitConsole(ctx, prefix); err != nil {
		t.Fatal(err)
	}
	for _, m := range b.Console() {
		if rest, ok := strings.CutPrefix(m, prefix); ok {
			if err := json.Unmarshal([]byte(rest), v); err != nil {
				t.Fatalf("%s: %v", m, err)
			}
			return
		}
	}
}

func TestChromiumFakeVideo(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The pendulum at its default 20 fps, 128 px, 3 s: 60 frames.
	frames, _, err := sim.Render(ctx, sim.Scene{System: sim.SystemPendulum, Gamma1: 0.08, Gamma0: 4.0016, Z0: 50, Duration: 3, Size: 128, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	y4m := filepath.Join(t.TempDir(), "pendulum.y4m")
	if err := sim.WriteY4M(y4m, frames, sim.DefaultFPS(sim.SystemPendulum)); err != nil {
		t.Fatal(err)
	}
	b := launch(t, ctx, probePage, y4m)

	var codecs []string
	consoleJSON(t, ctx, b, "codecs", &codecs)
	t.Logf("video send codecs: %q", codecs)
	for _, want := range []string{"video/VP8", "video/H264 level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42e01f"} {
		if !slices.Contains(codecs, want) {
			t.Errorf("send codecs lack %q", want)
		}
	}
	var set struct{ Width, Height, FrameRate float64 }
	consoleJSON(t, ctx, b, "settings", &set)
	if set.Width != 128 || set.Height != 128 || set.FrameRate != 20 {
		t.Errorf("track settings %+v, want the y4m's 128×128 at 20 fps", set)
	}
	var got struct {
		Frames  int
		Seconds float64
	}
	consoleJSON(t, ctx, b, "frames", &got)
	rate := float64(got.Frames) / got.Seconds
	t.Logf("delivered %d frames in %.2f s (%.1f fps)", got.Frames, got.Seconds, rate)
	// 4 s at 20 fps is 80 frames from a 60-frame clip: it must loop.
	if got.Frames <= len(frames) || rate < 18 || rate > 22 {
		t.Errorf("delivered %d frames in %.2f s, want a looping clip at 20 fps", got.Frames, got.Seconds)
	}
	if slices.ContainsFunc(b.Console(), func(m string) bool { return strings.HasPrefix(m, "physd: error") }) {
		t.Errorf("page error: %q", b.Console())
	}
}

// TestChromiumContextClose checks the built-in fake pattern and that a done
// context closes the browser.
func TestChromiumContextClose(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	bctx, stop := context.WithCancel(ctx)
	b := launch(t, bctx, probePage, "")
	var set struct{ Width, Height, FrameRate float64 }
	consoleJSON(t, ctx, b, "settings", &set)
	t.Logf("built-in fake camera: %+v", set)
	if set.Width <= 0 || set.Height <= 0 || set.FrameRate <= 0 {
		t.Errorf("track settings %+v", set)
	}
	stop()
	select {
	case <-b.done:
	case <-ctx.Done():
		t.Fatal("chromium still running after its context was cancelled")
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.WaitConsole(ctx, "never logged"); err == nil || !strings.Contains(err.Error(), "exited") {
		t.Errorf("WaitConsole after exit: %v", err)
	}
}
