package estimator

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
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

// The features and W's gradient are bitwise what gonum's Gemm gave on
// blocks of 16 centred frames, the formulation they replaced: the
// bootstrap's random stream is seeded by the residual's bits, so a change
// in the last bit of a latent would move the reported σ.
func TestLowRankMatchesGemmBitwise(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const p, k, hid, n = 700, 9, 3, 53 // n and p not multiples of the blocks
	e := NewLowRank(rng, p, k, hid)
	for _, prm := range e.Params() {
		for i := range data(prm) {
			data(prm)[i] = rng.NormFloat64()
		}
	}
	for j := range e.Mean {
		e.Mean[j] = rng.Float64()
	}
	frames := make([][]float64, n)
	for i := range frames {
		frames[i] = make([]float64, p)
		for j := range frames[i] {
			frames[i][j] = rng.Float64()
		}
	}
	dh := make([]float64, n*k)
	for i := range dh {
		if i%7 != 3 { // some exact zeros, which Gemm skips
			dh[i] = rng.NormFloat64()
		}
	}
	// The reference: Gemm over blocks of 16 centred frames.
	wantH := make([]float64, n*k)
	wantDW := make([]float64, k*p)
	for i := range wantDW {
		wantDW[i] = rng.NormFloat64() // backward accumulates
	}
	gotDW := append([]float64(nil), wantDW...)
	w := blas64.General{Rows: k, Cols: p, Stride: p, Data: data(e.W)}
	dW := blas64.General{Rows: k, Cols: p, Stride: p, Data: wantDW}
	for i0 := 0; i0 < n; i0 += 16 {
		r := min(16, n-i0)
		x := blas64.General{Rows: r, Cols: p, Stride: p, Data: make([]float64, r*p)}
		for i := range r {
			for j, v := range frames[i0+i] {
				x.Data[i*p+j] = v - e.Mean[j]
			}
		}
		blas64.Gemm(blas.NoTrans, blas.Trans, 1, x, w,
			0, blas64.General{Rows: r, Cols: k, Stride: k, Data: wantH[i0*k : (i0+r)*k]})
		blas64.Gemm(blas.Trans, blas.NoTrans, 1,
			blas64.General{Rows: r, Cols: k, Stride: k, Data: dh[i0*k : (i0+r)*k]}, x, 1, dW)
	}
	h := e.features(frames)
	copy(gdata(e.W), gotDW)
	e.accumulateWGrad(frames, dh)
	for i := range h {
		if math.Float64bits(h[i]) != math.Float64bits(wantH[i]) {
			t.Fatalf("h[%d] = %v, Gemm gave %v", i, h[i], wantH[i])
		}
	}
	for i, v := range gdata(e.W) {
		if math.Float64bits(v) != math.Float64bits(wantDW[i]) {
			t.Fatalf("dW[%d] = %v, Gemm gave %v", i, v, wantDW[i])
		}
	}
}

// BenchmarkLowRankPass is one training step's encoder work on a long
// window (1,275 frames of 64×64, pendulum_ball's 21 s at 60 fps): the
// forward pass and W's gradient, the part of a step that grows with the
// window.
func BenchmarkLowRankPass(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	const p, k, hid, n = 64 * 64, 32, 8, 1275
	e := NewLowRank(rng, p, k, hid)
	for _, prm := range e.Params() {
		for i := range data(prm) {
			data(prm)[i] = 0.01 * rng.NormFloat64()
		}
	}
	frames := make([][]float64, n)
	for i := range frames {
		frames[i] = make([]float64, p)
		for j := range frames[i] {
			frames[i][j] = rng.Float64()
		}
	}
	dz := make([]float64, n)
	for i := range dz {
		dz[i] = rng.NormFloat64()
	}
	for b.Loop() {
		_, back, err := e.pass(frames)
		if err != nil {
			b.Fatal(err)
		}
		if err := back(dz); err != nil {
			b.Fatal(err)
		}
	}
}
