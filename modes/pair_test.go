package modes

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/physd/physd/sim"
)

// Pair tells two modes within one spectral line from one: equal pairs
// half a half-power bandwidth apart (ζ = 2 %) and one bandwidth apart
// (ζ = 1 %) are close pairs on every seed of 10 (the half-bandwidth pair
// 9 of 10 before Close asked the stronger term's frequency to be known
// within the bar); single modes never are. A
// pair a quarter bandwidth apart (ζ = 1 %, 0.5 % apart), which one mode
// fitted to it would read within the bar of both, may go either way: it
// is two modes.
func TestPairTellsTwoModesInOneLine(t *testing.T) {
	yes, no := true, false
	for _, c := range []struct {
		name  string
		modes []sim.Mode
		close *bool // nil: either
	}{
		{"1 Hz ζ 1 % 1 px", []sim.Mode{{Fn: 1, Zeta: 0.01, AmplitudePx: 1}}, &no},
		{"2 Hz ζ 2 % 0.3 px", []sim.Mode{{Fn: 2, Zeta: 0.02, AmplitudePx: 0.3}}, &no},
		{"1 Hz ζ 0.5 % 3 px", []sim.Mode{{Fn: 1, Zeta: 0.005, AmplitudePx: 3}}, &no},
		{"0.5 bandwidth, ζ 2 %", []sim.Mode{{Fn: 1, Zeta: 0.02, AmplitudePx: 1}, {Fn: 1.02, Zeta: 0.02, AmplitudePx: 1}}, &yes},
		{"1 bandwidth, ζ 1 %", []sim.Mode{{Fn: 1, Zeta: 0.01, AmplitudePx: 1}, {Fn: 1.02, Zeta: 0.01, AmplitudePx: 1}}, &yes},
		{"0.25 bandwidth, ζ 1 %", []sim.Mode{{Fn: 1, Zeta: 0.01, AmplitudePx: 1}, {Fn: 1.005, Zeta: 0.01, AmplitudePx: 1}}, nil},
	} {
		for seed := uint64(1); seed <= 10; seed++ {
			x, dt := readout(t, append([]sim.Mode(nil), c.modes...), 20, 0.05, seed)
			p, err := Pair(x, dt, c.modes[0].Omega())
			if err != nil {
				t.Fatal(err)
			}
			got, why := p.Close()
			t.Logf("%s seed %d: F %.3g, spacing %.2f bandwidth, close %v %s", c.name, seed, p.F, p.Spacing(), got, why)
			if c.close != nil && got != *c.close {
				t.Errorf("%s seed %d: close %v (F %.3g), want %v", c.name, seed, got, p.F, *c.close)
			}
		}
	}
}

// A damper whose drag grows with the speed squared (a ball in oil) decays
// faster while it swings wide, and a spring that stiffens with the
// stretch rings faster while it does: the envelope is no exponential, or
// the frequency drifts, and two terms fit either better than one — a
// shape, not a second mode (make real's ballOil fits a second term at
// nearly one frequency with twice the damping). Without Close's spacing
// bound the stiffening spring read as two modes on 2 of 3 seeds (terms
// 0.17–0.19 bandwidth apart).
//
// The stiffening spring alone (linear drag, κ = 0.006 at 3 units: its
// frequency 2 % high at the release, drifting down through the window)
// may be refused: its one-mode estimate reads a frequency between its
// large- and small-amplitude ones, and a refusal is right when that
// estimate is more than PairSpread/2 from the small-amplitude frequency
// (1 % in γ0, the bar) — which the test then checks. Seed 2's two-term
// fit was 0.497 % from the one-mode estimate, 0.11 % σ, and is refused
// since Close asks the stronger term to be known within the bar too.
func TestPairLeavesANonlinearOscillatorAlone(t *testing.T) {
	const (
		fps, dur = 30.0, 8.0
		omega    = 2 * math.Pi
	)
	for _, c := range []struct{ linear, quad, cubic float64 }{{0.3, 0.15, 0}, {0.75, 0.3, 0}, {0.4, 1.5, 0}, {0.75, 0.3, 0.003}, {0.75, 0.3, -0.003}, {0.9, 0.5, 0.006}, {0.9, 0.5, -0.006}, {0.5, 0, 0.006}} {
		for seed := uint64(1); seed <= 3; seed++ {
			rng := rand.New(rand.NewPCG(seed, 11))
			// x'' + c₁x' + c₂|x'|x' + ω²x(1 + κx²) = 0 by RK4, 20 steps a frame.
			f := func(x, v float64) (float64, float64) {
				return v, -c.linear*v - c.quad*math.Abs(v)*v - omega*omega*x*(1+c.cubic*x*x)
			}
			x, v := 3.0, 0.0
			n := int(fps * dur)
			xs := make([]float64, n)
			h := 1 / fps / 20
			for i := range n {
				xs[i] = x + 0.05*rng.NormFloat64()
				for range 20 {
					k1x, k1v := f(x, v)
					k2x, k2v := f(x+h/2*k1x, v+h/2*k1v)
					k3x, k3v := f(x+h/2*k2x, v+h/2*k2v)
					k4x, k4v := f(x+h*k3x, v+h*k3v)
					x += h / 6 * (k1x + 2*k2x + 2*k3x + k4x)
					v += h / 6 * (k1v + 2*k2v + 2*k3v + k4v)
				}
			}
			p, err := Pair(xs, 1/fps, omega)
			if err != nil {
				t.Fatal(err)
			}
			got, why := p.Close()
			t.Logf("drag %.2f·v + %.2f·|v|v, spring ω²(1%+.3f·x²) seed %d: F %.3g, spacing %.2f bandwidth, close %v %s", c.linear, c.quad, c.cubic, seed, p.F, p.Spacing(), got, why)
			if got && c.quad == 0 {
				// The linear oscillator's damped frequency, the small-amplitude one.
				fd := math.Sqrt(omega*omega-c.linear*c.linear/4) / (2 * math.Pi)
				if d := math.Abs(p.One.Terms[0].Hz()/fd - 1); d <= PairSpread/2 {
					t.Errorf("stiffening spring seed %d refused with its one-mode estimate %.3f %% from its small-amplitude frequency (within the bar)", seed, 100*d)
				}
				continue
			}
			if got {
				t.Errorf("drag %.2f·v + %.2f·|v|v seed %d: read as two modes", c.linear, c.quad, seed)
			}
		}
	}
}
