//go:build !nocv

package chaos

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/physd/physd/internal/physdtest"
)

// rtspFigures is what the RTSP restart measured.
type rtspFigures struct {
	down, latency   time.Duration
	frames, windows [2]map[string]float64 // per second: [0] before, [1] while the RTSP camera was away
}

func (f rtspFigures) print() {
	fmt.Printf("RTSP server dead for            %v\n", f.down.Round(10*time.Millisecond))
	fmt.Printf("first frame after its return    %v\n", f.latency.Round(10*time.Millisecond))
	fmt.Printf("camera  frames/s before → during   windows/s before → during\n")
	for _, c := range append(synthetic, rtspCam) {
		fmt.Printf("%-7s %6.2f → %6.2f            %5.2f → %5.2f\n", c, f.frames[0][c], f.frames[1][c], f.windows[0][c], f.windows[1][c])
	}
}

// measureRTSPRestart kills the RTSP server for -chaos.rtsp-down and
// restarts it; it measures how soon physd's RTSP camera receives frames
// again and the other cameras' frame and window rates before and during
// the RTSP camera's absence.
func measureRTSPRestart(ctx context.Context, t *testing.T, scrape func() physdtest.Metrics, kill func(), restart func() rtspChild) rtspFigures {
	t.Helper()
	var f rtspFigures
	rates := func(a, b physdtest.Metrics, span time.Duration) (frames, windows map[string]float64) {
		fa, fb := perCamera(a, "physd_frames_received_total"), perCamera(b, "physd_frames_received_total")
		wa, wb := perCamera(a, "physd_windows_total"), perCamera(b, "physd_windows_total")
		sa, sb := perCamera(a, "physd_windows_skipped_total"), perCamera(b, "physd_windows_skipped_total")
		frames, windows = map[string]float64{}, map[string]float64{}
		for c := range fa {
			frames[c] = (fb[c] - fa[c]) / span.Seconds()
			windows[c] = (wb[c] + sb[c] - wa[c] - sa[c]) / span.Seconds()
		}
		return frames, windows
	}
	base := max(*flagRTSPDown, 10*time.Second)
	m0, t0 := scrape(), time.Now()
	sleep(ctx, base)
	m1, t1 := scrape(), time.Now()
	f.frames[0], f.windows[0] = rates(m0, m1, t1.Sub(t0))

	kill()
	mk, tk := scrape(), time.Now()
	sleep(ctx, *flagRTSPDown)
	dead := scrape().Sum("physd_frames_received_total", `camera="`+rtspCam+`"`)
	restart() // returns once the server has the stream again
	tr := time.Now()
	f.down = tr.Sub(tk)
	for {
		m := scrape()
		if m.Sum("physd_frames_received_total", `camera="`+rtspCam+`"`) > dead {
			f.latency = time.Since(tr)
			f.frames[1], f.windows[1] = rates(mk, m, time.Since(tk))
			break
		}
		if time.Since(tr) > 30*time.Second {
			t.Fatalf("the RTSP camera received no frame within 30 s of its server's return")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if f.latency > 5*time.Second {
		t.Errorf("frames flowed again %v after the RTSP server returned; want within 5 s", f.latency)
	}
	for _, c := range synthetic {
		if f.frames[1][c] < 0.9*f.frames[0][c] || f.windows[1][c] < 0.75*f.windows[0][c] {
			t.Errorf("camera %s slowed while the RTSP camera was away: frames/s %.2f → %.2f, windows/s %.2f → %.2f",
				c, f.frames[0][c], f.frames[1][c], f.windows[0][c], f.windows[1][c])
		}
	}
	return f
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
