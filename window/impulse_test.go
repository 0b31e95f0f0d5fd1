package window

import (
	"math"
	"testing"
)

// impulseOf fits z as estimator.Fit does (resultOf) and tests it for an
// impulse.
func impulseOf(t *testing.T, z []float64, dt float64) Impulse {
	t.Helper()
	r := resultOf(t, z, dt, [2][2]float64{})
	tr, err := NewTrace(r)
	if err != nil {
		t.Fatal(err)
	}
	return testImpulse(r.Trajectory, tr, keyFrames{})
}

// A push mid-window (the velocity jumps) is an impulse; a dropped frame
// and a repeated one (the phase jumps, as in a re-timed file) are not.
func TestImpulse(t *testing.T) {
	const fps, n, w, zeta = 30.0, 240, 2 * math.Pi, 0.01
	dt := 1 / fps
	free := func(tt, a, v float64) float64 {
		s := exactSolution(2*zeta*w, w*w, a, v, []float64{tt})
		return s[0]
	}
	clean := make([]float64, n)
	pushed := make([]float64, n)
	dropped := make([]float64, n)
	repeated := make([]float64, n)
	const at = 100
	for k := range clean {
		tt := float64(k) * dt
		clean[k] = free(tt, 1, 0)
		pushed[k] = clean[k]
		dropped[k] = clean[k]
		repeated[k] = clean[k]
		if k > at {
			dropped[k] = free(tt+dt, 1, 0)
			repeated[k] = free(tt-dt, 1, 0)
		}
	}
	// The push: from sample `at` on, the motion restarts from the same
	// position with its velocity raised by twice the peak velocity. What
	// testImpulse resolves is a jump above maxImpulse·ω_nΔt times the peak
	// velocity (here 1.05×): below that, a frozen frame's step is as large.
	t0 := float64(at) * dt
	x0 := clean[at]
	v0 := (clean[at+1]-clean[at-1])/(2*dt) + 2*w
	for k := at; k < n; k++ {
		pushed[k] = free(float64(k)*dt-t0, x0, v0)
	}
	for _, c := range []struct {
		name string
		z    []float64
		want bool
	}{{"clean", clean, false}, {"pushed", pushed, true}, {"dropped frame", dropped, false}, {"repeated frame", repeated, false}} {
		im := impulseOf(t, c.z, dt)
		t.Logf("%-15s impulse %.1f at %.2f s", c.name, im.Ratio, im.At)
		if got := im.Ratio > maxImpulse; got != c.want {
			t.Errorf("%s: impulse %.1f at %.2f s, flagged %v, want %v", c.name, im.Ratio, im.At, got, c.want)
		}
	}
}
