package modes

import (
	"testing"

	"github.com/physd/physd/sim"
)

// Pair tells two modes within one spectral line from one: equal pairs
// half a half-power bandwidth apart (ζ = 2 %) and one bandwidth apart
// (ζ = 1 %) are close pairs on every seed; single modes never are. A
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
		for seed := uint64(1); seed <= 6; seed++ {
			x, dt := readout(t, append([]sim.Mode(nil), c.modes...), 20, 0.05, seed)
			p, err := Pair(x, dt, c.modes[0].Omega())
			if err != nil {
				t.Fatal(err)
			}
			got, why := p.Close()
			t.Logf("%s seed %d: F %.3g, close %v %s", c.name, seed, p.F, got, why)
			if c.close != nil && got != *c.close {
				t.Errorf("%s seed %d: close %v (F %.3g), want %v", c.name, seed, got, p.F, *c.close)
			}
		}
	}
}
