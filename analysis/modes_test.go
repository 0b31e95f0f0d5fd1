package analysis

import (
	"context"
	"math"
	"testing"

	"github.com/physd/physd/estimator"
	"github.com/physd/physd/internal/shiftscene"
)

// An event window — three releases of a block ringing in two modes (1.0
// Hz ζ 1 %, 2.7 Hz ζ 2 %), the modes' shares differing from release to
// release, 8 s each at 64×64 — has its modes found on the small-motion
// reading of each release and each certified over the releases that
// carry it, within the bar (γ0 within 1 %, ζ within 25 %).
func TestModesOfAnEventWindow(t *testing.T) {
	if testing.Short() {
		t.Skip("fits an event window of three clips")
	}
	const dt, n = 1.0 / 30, 240
	truth := [2][2]float64{{1.0, 0.01}, {2.7, 0.02}}
	p, _ := estimator.LookupPreset(estimator.DefaultPreset)
	amps := [][2]float64{{0.3, 0.1}, {0.15, 0.2}, {0.1, 0.3}}
	var clips []estimator.Clip
	for k, a := range amps {
		d := shiftscene.Decay(n, dt, a[0], truth[0][0], truth[0][1])
		for i, v := range shiftscene.Decay(n, dt, a[1], truth[1][0], truth[1][1]) {
			d[i] += v
		}
		clips = append(clips, shiftscene.Clip(64, 64, dt, d, 1, 0, 0.005, uint64(3+k)))
	}
	rep, err := Window(context.Background(), clips, Options{Preset: p, Seed: 1, Modes: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Modes == nil || len(rep.Modes.Modes) != 2 {
		t.Fatalf("modes %+v, want two", rep.Modes)
	}
	for i, m := range rep.Modes.Modes {
		r := m.Result
		fn := math.Sqrt(r.Gamma0) / (2 * math.Pi)
		in := math.Abs(fn*fn/(truth[i][0]*truth[i][0])-1) <= 0.01 && math.Abs(r.Zeta/truth[i][1]-1) <= 0.25
		t.Logf("mode %d on %s over %d releases: %.4f Hz ζ %.4f: certified %v %v (in the bar %v)", m.Index, rep.Modes.Readout, len(r.Latents), fn, r.Zeta, m.Verdict.Certified, m.Verdict.Reasons, in)
		if m.Verdict.Certified && !in {
			t.Errorf("mode %d certified outside the bar", m.Index)
		}
		if !m.Verdict.Certified {
			t.Errorf("mode %d refused: %v", m.Index, m.Verdict.Reasons)
		}
	}
}
