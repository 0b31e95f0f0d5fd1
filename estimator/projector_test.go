package estimator

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestProjectorMatchesQR checks the projector's profiled residual against
// a dense QR solve of the same trajectory design, for clips of their own
// and for runs of one clip with gaps, under each offset, summing as the
// fits do and as the bootstrap's refits do (projector.fast).
func TestProjectorMatchesQR(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 17))
	const dt = 1.0 / 30
	layouts := map[string]func() (layout, error){
		"clips": func() (layout, error) { return seqLayout([]int{40, 7, 90}), nil },
		"runs": func() (layout, error) {
			lat := [][]float64{make([]float64, 30), make([]float64, 12), make([]float64, 50), make([]float64, 25)}
			return latentsLayout(lat, &Runs{Clip: []int{0, 0, 1, 1}, First: []int{0, 41, 3, 70}})
		},
	}
	for name, mk := range layouts {
		lay, err := mk()
		if err != nil {
			t.Fatal(err)
		}
		for _, off := range []Offset{NoOffset, SharedOffset, ClipOffsets} {
			for _, g := range [][2]float64{{0.3, 40}, {9, 16}, {0, 4}} {
				z := make([]float64, lay.n())
				for i := range z {
					z[i] = math.Sin(0.3*float64(i)) + 0.1*rng.NormFloat64()
				}
				want, _, err := projectedResidual(z, lay, g[0], g[1], dt, off)
				if err != nil {
					t.Fatal(err)
				}
				for _, fast := range []bool{false, true} {
					got := make([]float64, len(z))
					pr := newProjector(lay, dt, off)
					pr.fast = fast
					if err := pr.residual(z, g[0], g[1], got); err != nil {
						t.Fatal(err)
					}
					var d, s float64
					for i := range got {
						d = math.Max(d, math.Abs(got[i]-want[i]))
						s = math.Max(s, math.Abs(z[i]))
					}
					if d > 1e-10*s {
						t.Errorf("%s, offset %v, γ = %v, fast %v: residual differs from QR's by %.3g (scale %.3g)", name, off, g, fast, d, s)
					}
				}
			}
		}
	}
}

// TestProjectorJacobian checks Kaufman's Jacobian against central
// differences of the profiled residual: its projection off X's range
// must match, and the gradient Jᵀr of ½‖r‖² must be exact.
func TestProjectorJacobian(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 1))
	const dt = 1.0 / 60
	lat := [][]float64{make([]float64, 80), make([]float64, 30), make([]float64, 120)}
	runs, err := latentsLayout(lat, &Runs{Clip: []int{0, 0, 1}, First: []int{0, 95, 2}})
	if err != nil {
		t.Fatal(err)
	}
	for name, lay := range map[string]layout{"clips": seqLayout([]int{150, 60}), "runs": runs} {
		for _, off := range []Offset{NoOffset, SharedOffset, ClipOffsets} {
			for _, g := range [][2]float64{{0.4, 38}, {12, 20}, {0.05, 3}} {
				n := lay.n()
				z := make([]float64, n)
				for i := range z {
					z[i] = math.Cos(5.9*float64(i)*dt)*math.Exp(-0.25*float64(i)*dt) + 0.3 + 0.02*rng.NormFloat64()
				}
				pr := newProjector(lay, dt, off)
				r := make([]float64, n)
				if err := pr.residual(z, g[0], g[1], r); err != nil {
					t.Fatal(err)
				}
				jac := make([][2]float64, n)
				if err := pr.jacobian(jac, make([]float64, 2*n)); err != nil {
					t.Fatal(err)
				}
				fd := newProjector(lay, dt, off)
				for j := range 2 {
					h := 1e-6 * math.Max(1, math.Abs(g[j]))
					gp, gm := g, g
					gp[j] += h
					gm[j] -= h
					rp, rm := make([]float64, n), make([]float64, n)
					if fd.residual(z, gp[0], gp[1], rp) != nil || fd.residual(z, gm[0], gm[1], rm) != nil {
						t.Fatal("residual failed")
					}
					col := make([]float64, n)
					var grad, gradFD, scale, diff float64
					for i := range col {
						col[i] = (rp[i] - rm[i]) / (2 * h)
						gradFD += col[i] * r[i]
						grad += jac[i][j] * r[i]
					}
					pr.project(col) // (I − P) ∂r/∂γj is Kaufman's term
					for i := range col {
						scale = math.Max(scale, math.Abs(col[i]))
						diff = math.Max(diff, math.Abs(col[i]-jac[i][j]))
					}
					if diff > 1e-5*scale {
						t.Errorf("%s, offset %v, γ = %v: ∂r/∂γ%d off X's range differs by %.3g (scale %.3g)", name, off, g, 1-j, diff, scale)
					}
					if math.Abs(grad-gradFD) > 1e-5*math.Abs(gradFD)+1e-9 {
						t.Errorf("%s, offset %v, γ = %v: gradient in γ%d %.10g, differenced %.10g", name, off, g, 1-j, grad, gradFD)
					}
				}
			}
		}
	}
}

// The bootstrap's refits (fast sums) find the fit's γ to the search's
// tolerance: on a coloured-noise latent, from a start away from it, both
// searches stop within 1e-7 of each other, relative.
func TestTrajectoryLMFastMatches(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const dt = 1.0 / 30
	for trial := range 5 {
		z := ar1Latent(t, rng, 0.2+0.1*float64(trial), 20+5*float64(trial), dt, 0.8, 0.05, 300)
		lay := seqLayout([]int{len(z)})
		start := [2]float64{0.5, 30}
		want, err := trajectoryLM(z, lay, dt, start, SharedOffset, false)
		if err != nil {
			t.Fatal(err)
		}
		got, err := trajectoryLM(z, lay, dt, start, SharedOffset, true)
		if err != nil {
			t.Fatal(err)
		}
		for j := range 2 {
			if d := math.Abs(got[j] - want[j]); !(d <= 1e-7*math.Max(1, math.Abs(want[j]))) {
				t.Errorf("trial %d: γ%d fast %.12g, exact %.12g", trial, 1-j, got[j], want[j])
			}
		}
	}
}
