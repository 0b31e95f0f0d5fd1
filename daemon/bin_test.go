package daemon

import (
	"math"
	"testing"
	"time"

	"github.com/physd/physd/sim"
	"github.com/physd/physd/wire"
)

// TestBinnedCamera runs the default synthetic pendulum (20 fps) with
// windows.bin 2: its windows hold half the frames, 10 a second (the
// estimates say so: bin 2), and the
// certified estimates are within the estimator's accuracy bar, as
// unbinned ones are (a mean of a free response is a free response of
// the same ODE).
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
