package estimator

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The low-rank encoder's backward pass against central finite differences
// of the full objective (residual + variance floor) with respect to every
// parameter.
func TestLowRankGradients(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const p, k, hid, n = 12, 4, 3, 9
	e := NewLowRank(rng, p, k, hid)
	for _, prm := range e.Params() {
		for i := range data(prm) {
			data(prm)[i] = 0.5 * rng.NormFloat64()
		}
	}
	for j := range e.Mean {
		e.Mean[j] = 0.1 * rng.Float64()
	}
	frames := make([][]float64, n)
	for i := range frames {
		frames[i] = make([]float64, p)
		for j := range frames[i] {
			frames[i][j] = rng.Float64()
		}
	}
	cfg := LossConfig{Reg: VarFloor, Tau: 5, Lambda: 1, Eps: 1e-8, Offset: SharedOffset}
	c := Coefficients{Gamma1: 0.3, Gamma0: 2, G: 0.1}
	lossOf := func() float64 {
		z, err := e.Encode(frames)
		if err != nil {
			t.Fatal(err)
		}
		l, _, _ := Objective([][]float64{z}, 0.1, c, cfg)
		return l
	}
	z, back, err := e.pass(frames)
	if err != nil {
		t.Fatal(err)
	}
	_, dz, _ := Objective([][]float64{z}, 0.1, c, cfg)
	for _, prm := range e.Params() {
		for i := range gdata(prm) {
			gdata(prm)[i] = 0
		}
	}
	if err := back(dz[0]); err != nil {
		t.Fatal(err)
	}
	const h = 1e-6
	for _, prm := range e.Params() {
		v, g := data(prm), gdata(prm)
		for i := range v {
			old := v[i]
			v[i] = old + h
			lp := lossOf()
			v[i] = old - h
			lm := lossOf()
			v[i] = old
			num := (lp - lm) / (2 * h)
			if d := math.Abs(num - g[i]); d > 1e-5*math.Max(1, math.Abs(num)) {
				t.Errorf("%s[%d]: backward %g, finite difference %g", prm.Name, i, g[i], num)
			}
		}
	}
}

func TestLowRankRejectsWrongFrameSize(t *testing.T) {
	e := NewLowRank(rand.New(rand.NewPCG(1, 1)), 16, 2, 0)
	if _, err := e.Encode([][]float64{make([]float64, 15)}); err == nil {
		t.Error("a 15-pixel frame must be rejected by a 16-pixel encoder")
	}
}
