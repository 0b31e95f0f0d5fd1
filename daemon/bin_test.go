package daemon

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/physd/physd/config"
	"github.com/physd/physd/estimator"
	"github.com/physd/physd/sim"
	"github.com/physd/physd/window"
	"github.com/physd/physd/wire"
)

// TestBinnedCamera runs the default synthetic pendulum (20 fps) with
// windows.bin 2: its windows hold half the frames, 10 a second (the
// estimates say so: bin 2), and the
// certified estimates are within the estimator's accuracy bar, as
// unbinned ones are (fixed weights over a free response give a free
// response of the same ODE).
func TestBinnedCamera(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the daemon for tens of seconds")
	}
	cfg := testConfig()
	cfg.Windows.Bin = 2
	r := start(t, cfg, t.TempDir())
	c := collect(t, r.d)
	waitFor(t, 90*time.Second, "three certified estimates", func() bool { return len(c.kind(wire.KindEstimate)) >= 3 })
	g1, g0 := sim.GroundTruth(sim.RegimeUnderdamped)
	for _, e := range estimates(t, c) {
		t.Logf("binned estimate: %d frames, γ0 %.5f ± %.5f γ1 %.5f ± %.5f", e.Frames, e.Gamma0, e.Gamma0Sigma, e.Gamma1, e.Gamma1Sigma)
		if math.Abs(e.Gamma0-g0) > 0.005*g0 || math.Abs(e.Gamma1-g1) > 0.004 {
			t.Errorf("certified γ0 %.5f γ1 %.5f: want (%.4f, %.4f) within the bar", e.Gamma0, e.Gamma1, g0, g1)
		}
		if e.Bin != 2 {
			t.Errorf("estimate says bin %d, want 2", e.Bin)
		}
		// 4.712 s at 10 binned frames a second.
		if e.Frames < 45 || e.Frames > 48 {
			t.Errorf("a binned window holds %d frames, want 47 ± 2", e.Frames)
		}
	}
}

// TestAutoBinnedCamera runs the default synthetic pendulum with the
// default windows.bin, auto: it starts at the full rate, and once a
// window is certified (γ0 = 4 at 20 fps: sixteen bins a period would
// allow 3, the window's 48 bins allow 2) its windows are binned by 2; the
// estimates before and after are within the estimator's accuracy bar.
func TestAutoBinnedCamera(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the daemon for tens of seconds")
	}
	cfg := testConfig()
	if cfg.Windows.Bin != config.BinAuto {
		t.Fatalf("windows.bin is %v by default, want auto", cfg.Windows.Bin)
	}
	r := start(t, cfg, t.TempDir())
	c := collect(t, r.d)
	count := func(bin int) int {
		n := 0
		for _, e := range estimates(t, c) {
			if e.Bin == bin {
				n++
			}
		}
		return n
	}
	waitFor(t, 120*time.Second, "a certified estimate at the full rate, then three binned by 2", func() bool { return count(0) >= 1 && count(2) >= 3 })
	g1, g0 := sim.GroundTruth(sim.RegimeUnderdamped)
	binned := false
	for _, e := range estimates(t, c) {
		t.Logf("estimate: bin %d, %d frames, γ0 %.5f ± %.5f γ1 %.5f ± %.5f", e.Bin, e.Frames, e.Gamma0, e.Gamma0Sigma, e.Gamma1, e.Gamma1Sigma)
		if math.Abs(e.Gamma0-g0) > 0.005*g0 || math.Abs(e.Gamma1-g1) > 0.004 {
			t.Errorf("certified γ0 %.5f γ1 %.5f: want (%.4f, %.4f) within the bar", e.Gamma0, e.Gamma1, g0, g1)
		}
		switch {
		case e.Bin == 2:
			binned = true
		case e.Bin != 0 || binned:
			t.Errorf("estimate says bin %d after %v binned ones, want full rate (0) and then 2", e.Bin, binned)
		}
	}
}

// An auto line's framing takes the decimation its certified windows ask
// for, drops requests learned from windows of another decimation (in
// flight across a change), and looks at the full rate again every probe.
func TestAutoBinProbes(t *testing.T) {
	c := &binChoice{}
	a := &autoBin{choice: c, probe: 10 * time.Minute}
	if n, why := a.next(1, 0); n != 1 || why != "" {
		t.Fatalf("no request: bin %d (%q), want 1", n, why)
	}
	c.req.Store(3<<8 | 1) // bin 3, learned at the full rate
	if n, _ := a.next(1, time.Second); n != 3 {
		t.Fatalf("bin %d, want 3", n)
	}
	c.req.Store(2<<8 | 1) // learned from a full-rate window still in flight
	if n, why := a.next(3, 2*time.Second); n != 3 || why != "" {
		t.Errorf("a stale request moved the bin to %d (%q)", n, why)
	}
	if n, _ := a.next(3, 9*time.Minute); n != 3 {
		t.Errorf("bin %d before the probe, want 3", n)
	}
	if n, why := a.next(3, 10*time.Minute+time.Second); n != 1 || why == "" {
		t.Errorf("bin %d (%q) after 10 min, want 1: a probe at the full rate", n, why)
	}
	c.req.Store(2<<8 | 3) // learned at bin 3 before the probe
	if n, _ := a.next(1, 10*time.Minute+2*time.Second); n != 1 {
		t.Errorf("a request from before the probe moved the bin to %d", n)
	}
	c.req.Store(2<<8 | 1)
	if n, _ := a.next(1, 10*time.Minute+9*time.Second); n != 2 {
		t.Errorf("bin %d after the probe certified, want 2", n)
	}
	// A stream that starts again restarts its clock: the probe counts
	// from there.
	c.req.Store(3<<8 | 2)
	if n, _ := a.next(2, 11*time.Minute); n != 3 {
		t.Fatalf("bin %d, want 3", n)
	}
	if n, _ := a.next(3, 5*time.Second); n != 3 {
		t.Errorf("bin %d just after the stream restarted, want 3", n)
	}
	if n, _ := a.next(3, 10*time.Minute+5*time.Second); n != 1 {
		t.Errorf("bin %d 10 min after the stream restarted, want 1", n)
	}
	// A fixed decimation has no autoBin.
	var fixed *autoBin
	if n, why := fixed.next(2, time.Hour); n != 2 || why != "" {
		t.Errorf("fixed bin moved to %d (%q)", n, why)
	}
}

// An auto line's reporting stage asks for what its windows' modes and
// spectral lines allow: a certified mode at once, a finer decimation for
// a line after two windows in a row, a coarser one after three (ten
// before the line's first certificate); a window of another decimation
// than the last starts the count again.
func TestAutoBinLearns(t *testing.T) {
	const fps = 30.0
	w := func(fHz float64) float64 { return math.Pow(2*math.Pi*fHz, 2) }
	win := func(bin int) job {
		n := int(6*fps/float64(bin)) + 1
		return job{clips: []estimator.Clip{{Dt: float64(bin) / fps}}, frames: n, bin: bin}
	}
	refused := func(peak float64) outcome { return outcome{peak: peak} }
	certified := func(f, peak float64) outcome {
		return outcome{res: &estimator.Result{Gamma1: 0.3, Gamma0: w(f)}, verdict: window.Verdict{Certified: true}, peak: peak}
	}
	c := &binChoice{}
	steps := []struct {
		name string
		bin  int
		o    outcome
		want int // the request after it (0: none)
	}{
		// A scene with no line that has certified nothing: BlindBin,
		// once ten windows agree.
		{"quiet 1", 1, refused(0), 0},
		{"quiet 2", 1, refused(0), 0},
		{"quiet 3", 1, refused(0), 0},
		{"quiet 4", 1, refused(0), 0},
		{"quiet 5", 1, refused(0), 0},
		{"quiet 6", 1, refused(0), 0},
		{"quiet 7", 1, refused(0), 0},
		{"quiet 8", 1, refused(0), 0},
		{"quiet 9", 1, refused(0), 0},
		{"quiet 10", 1, refused(0), 3},
		// A line at 2.79 Hz needs the full rate (8 samples a period):
		// one window of it is not enough, two in a row are.
		{"line once", 3, refused(2.79), 0},
		{"gone", 3, refused(0), 0},
		{"line again", 3, refused(2.79), 0},
		{"line twice", 3, refused(2.79), 1},
		// A certified 0.55 Hz mode asks for 3 at once.
		{"certified", 1, certified(0.55, 0), 3},
		// A certified 1.6 Hz mode, finer: at once, as its own.
		{"certified faster", 3, certified(1.6, 0), 1},
		// Uncertified windows bin no coarser than the last certified
		// mode allowed (1 here): no request.
		{"quiet after it 1", 1, refused(0), 0},
		{"quiet after it 2", 1, refused(0), 0},
		{"quiet after it 3", 1, refused(0), 0},
		// A certified slow mode whose window holds a 1.79 Hz line: the
		// line binds (2), and being a line's, coarser, waits for three.
		{"mode and line 1", 1, certified(0.3, 1.79), 0},
		{"mode and line 2", 1, certified(0.3, 1.79), 0},
		{"mode and line 3", 1, certified(0.3, 1.79), 2},
		// Windows at another decimation start the count again.
		{"at 2, quiet", 2, refused(0), 0},
		{"at 3, quiet", 3, refused(0), 0},
	}
	for _, s := range steps {
		c.learn(win(s.bin), s.o)
		v := c.req.Swap(0)
		got, from := int(v>>8), int(v&0xff)
		if got != s.want || v != 0 && from != s.bin {
			t.Errorf("%s: request bin %d from %d, want %d from %d", s.name, got, from, s.want, s.bin)
		}
	}
	// Failed, skipped and lone-event windows ask nothing.
	for _, o := range []outcome{{err: errors.New("no")}, {skipped: true}} {
		c.learn(win(1), o)
	}
	j := win(1)
	j.single = true
	c.learn(j, refused(0))
	if v := c.req.Load(); v != 0 {
		t.Errorf("request %x from windows that ask nothing", v)
	}
}
