package window

import (
	"math"
	"strings"
	"testing"

	"github.com/physd/physd/estimator"
	"github.com/physd/physd/sim"
)

// withSigma is r with σ1 scaled by s1 and σ0 by s0 (their correlation
// kept) and the physics derived again, as the estimator derives them.
func withSigma(r *estimator.Result, s1, s0 float64) *estimator.Result {
	s := *r
	sc := [2]float64{s1, s0}
	for i := range s.Cov {
		for j := range s.Cov[i] {
			s.Cov[i][j] *= sc[i] * sc[j]
		}
	}
	s.Sigma1, s.Sigma0 = math.Sqrt(s.Cov[0][0]), math.Sqrt(s.Cov[1][1])
	s.Physics = estimator.Derive(s.Gamma1, s.Gamma0, s.Cov)
	return &s
}

// A window the paper's conditions certify is refused when its σ is beyond
// the precision limits: still identified, not certified, with a reason
// that gives the σ reached and the window that would reach the limits.
// Limits raised by the user certify it again.
func TestPrecisionRefusesImpreciseWindow(t *testing.T) {
	r, v := fitScenes(t, []sim.Scene{pendulum(sim.RegimeUnderdamped, 50, 0, 1.5*math.Pi)})
	if !v.Certified || !v.Identified || !v.Precision.Holds {
		t.Fatalf("clean window: %s %v %+v", v.Status, v.Reasons, v.Precision)
	}
	if v.Precision.Data > 1 || v.Precision.LimitFn != defaultMaxRelSigmaFn {
		t.Errorf("clean window's precision %+v", v.Precision)
	}
	// σ(f_n)/f_n = σ0/(2γ0): scale σ to three times the default limit.
	rough := withSigma(r, 1, 3*defaultMaxRelSigmaFn*2*r.Gamma0/r.Sigma0)
	v = Certify(rough, Thresholds{}, nil)
	if v.Certified || !v.Identified || v.Status != NotCertified || v.Precision.Holds {
		t.Fatalf("σ(f_n) 3%% of f_n: %s identified=%v %+v", v.Status, v.Identified, v.Precision)
	}
	if got := v.Precision.RelSigmaFn; math.Abs(got-0.03) > 1e-9 {
		t.Errorf("σ(f_n)/f_n %.6g, want 0.03", got)
	}
	last := v.Reasons[len(v.Reasons)-1]
	if len(v.Reasons) != 1 || !strings.Contains(last, "imprecise: σ(f_n) is 3% of f_n (limit 1%)") || !strings.Contains(last, "a window of about") {
		t.Errorf("reasons %q", v.Reasons)
	}
	if !(v.Precision.WindowNeeded > clipSpan(r)) || v.Precision.ClipsNeeded != 0 {
		t.Errorf("window needed %.3g s for a clip of %.3g s", v.Precision.WindowNeeded, clipSpan(r))
	}
	if v = Certify(rough, Thresholds{MaxRelSigmaFn: 0.05, MaxRelSigmaZeta: 100}, nil); !v.Certified {
		t.Errorf("limits raised: %s %v", v.Status, v.Reasons)
	}
	// σ(ζ) alone: the floor and the relative limit both count. σ(ζ) 0.008
	// at ζ ≈ 0.02 is above both (0.005, 0.3ζ) and tells ζ from zero.
	zeta := withSigma(r, 1.6*defaultSigmaZetaFloor/r.Physics.SigmaZ, 1)
	if v = Certify(zeta, Thresholds{MaxRelSigmaFn: 1}, nil); v.Certified || math.Abs(v.Precision.SigmaZeta-0.008) > 0.001 || !strings.Contains(v.Reasons[len(v.Reasons)-1], "imprecise") {
		t.Errorf("σ(ζ) 0.008 at ζ %.3g: %s %v", r.Physics.Zeta, v.Status, v.Reasons)
	}
	if v = Certify(zeta, Thresholds{MaxRelSigmaFn: 1, SigmaZetaFloor: 0.009}, nil); !v.Certified {
		t.Errorf("σ(ζ) 0.008 under a floor of 0.009: %s %v", v.Status, v.Reasons)
	}
}

// Several clips refused for precision are told how many clips would do;
// one undamped-looking clip keeps its own verdict whatever its σ.
func TestPrecisionClipsAndUndamped(t *testing.T) {
	if testing.Short() {
		t.Skip("renders and fits several clips")
	}
	r, v := fitScenes(t, []sim.Scene{
		pendulum(sim.RegimeCritical, 50, -200, 2), pendulum(sim.RegimeCritical, 50, -600, 2), pendulum(sim.RegimeCritical, 50, -1000, 2)})
	if !v.Identified {
		t.Fatalf("three critical clips with coverage: %s %v", v.Status, v.Reasons)
	}
	// σ(f_n) 1.9 % of f_n: 3 clips × 1.9² = 10.8, so 11 (away from a
	// rounding edge, which arm64's fused multiply-adds could tip).
	v = Certify(withSigma(r, 1, 1.9*defaultMaxRelSigmaFn*2*r.Gamma0/r.Sigma0), Thresholds{MaxRelSigmaZeta: 100}, nil)
	if v.Certified || v.Precision.ClipsNeeded != 11 || !strings.Contains(v.Reasons[len(v.Reasons)-1], "about 11 clips like these") {
		t.Errorf("three clips at 1.9× the limit: %s %+v %v", v.Status, v.Precision, v.Reasons)
	}
	u, uv := fitScenes(t, []sim.Scene{pendulum(sim.RegimeUndamped, 50, 0, 2.5*math.Pi)})
	if uv.Status != UndampedDiscrete {
		t.Fatalf("undamped 2.5π: %s %v", uv.Status, uv.Reasons)
	}
	if v := Certify(withSigma(u, 1e3, 1e3), Thresholds{}, nil); v.Status != UndampedDiscrete || v.Identified {
		t.Errorf("undamped with a large σ: %s identified=%v %v", v.Status, v.Identified, v.Reasons)
	}
}

// precisionWindow: while the motion lasts the information grows as T³, so
// 8× the information is twice the window; past what the whole decay holds
// no window does.
func TestPrecisionWindow(t *testing.T) {
	if got := precisionWindow(1e-9, 5, 8); math.Abs(got-10) > 1e-6 {
		t.Errorf("undecaying: %.9g s, want 10", got)
	}
	a, have := 0.5, 2.0
	total := 2 / math.Pow(2*a, 3)
	info := func(T float64) float64 { // by quadrature, independent of the closed form
		const n = 20000
		var s float64
		for i := range n {
			t := (float64(i) + 0.5) * T / n
			s += t * t * math.Exp(-2*a*t) * T / n
		}
		return s
	}
	data := 0.5 * total / info(have)
	got := precisionWindow(a, have, data)
	if math.Abs(info(got)/(data*info(have))-1) > 1e-4 {
		t.Errorf("decaying: %.6g s holds %.6g of the information wanted", got, info(got)/(data*info(have)))
	}
	if got := precisionWindow(a, have, 1.01*total/info(have)); got != 0 {
		t.Errorf("beyond the whole decay: %.6g s, want 0", got)
	}
	if got := precisionWindow(a, have, 0.5); got != 0 {
		t.Errorf("already precise: %.6g s, want 0", got)
	}
}
