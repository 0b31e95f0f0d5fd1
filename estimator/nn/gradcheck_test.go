package nn

import (
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/tensor"
)

// gradTol bounds the relative error max|analytic − numeric| / max|numeric|
// of every checked gradient tensor. Central differences with h = 1e-5 in
// float64 are accurate to about h² ≈ 1e-10 plus rounding ε·|L|/h ≈ 1e-11·|L|.
const (
	gradStep = 1e-5
	gradTol  = 1e-6
)

func newRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)) }

func randTensor(rng *rand.Rand, scale float64, shape ...int) *tensor.Dense {
	d := make([]float64, prod(shape))
	for i := range d {
		d[i] = scale * rng.NormFloat64()
	}
	return fromSlice(d, shape...)
}

func f64(t *tensor.Dense) []float64 { return t.Data().([]float64) }

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// gradFloor is the gradient magnitude below which errors are measured
// absolutely. Some gradients are exactly zero (a conv bias feeding a
// train-mode BatchNorm, whose mean subtraction cancels it), and there the
// difference quotient is pure rounding noise of order ε·|L|/h ≈ 1e-11.
const gradFloor = 1e-4

// relErr is max_i |a_i − n_i| / max(max_i |n_i|, gradFloor): a scale-aware
// error that individual near-zero entries cannot blow up.
func relErr(a, n []float64) float64 {
	diff, scale := 0.0, 0.0
	for i := range a {
		diff = max(diff, math.Abs(a[i]-n[i]))
		scale = max(scale, math.Abs(n[i]))
	}
	return diff / max(scale, gradFloor)
}

// gradCheck compares l's input and parameter gradients of the scalar loss
// L = Σ_i w_i·y_i (w fixed random) with central differences. At most
// maxPerTensor entries per tensor are probed (chosen at random, fixed seed).
// It returns the worst relative error seen.
func gradCheck(t *testing.T, l Layer, x *tensor.Dense, train bool, maxPerTensor int) float64 {
	t.Helper()
	rng := newRNG(99)
	y, err := l.Forward(x, train)
	if err != nil {
		t.Fatalf("forward: %v", err)
	}
	w := randTensor(rng, 1, y.Shape()...)
	loss := func() float64 {
		y, err := l.Forward(x, train)
		if err != nil {
			t.Fatalf("forward: %v", err)
		}
		return dot(f64(y), f64(w))
	}

	params := l.Params()
	ZeroGrad(params)
	loss()
	dx, err := l.Backward(w)
	if err != nil {
		t.Fatalf("backward: %v", err)
	}
	if !sameShape(dx.Shape(), x.Shape()) {
		t.Fatalf("dx shape %v, want %v", dx.Shape(), x.Shape())
	}
	analytic := map[string][]float64{"input": append([]float64(nil), f64(dx)...)}
	values := map[string][]float64{"input": f64(x)}
	names := []string{"input"}
	for _, p := range params {
		analytic[p.Name] = append([]float64(nil), f64(p.Grad)...)
		values[p.Name] = f64(p.Value)
		names = append(names, p.Name)
	}

	worst := 0.0
	for _, name := range names {
		v := values[name]
		idx := rng.Perm(len(v))
		if len(idx) > maxPerTensor {
			idx = idx[:maxPerTensor]
		}
		a := make([]float64, len(idx))
		n := make([]float64, len(idx))
		for k, i := range idx {
			orig := v[i]
			v[i] = orig + gradStep
			lp := loss()
			v[i] = orig - gradStep
			lm := loss()
			v[i] = orig
			n[k] = (lp - lm) / (2 * gradStep)
			a[k] = analytic[name][i]
		}
		e := relErr(a, n)
		worst = max(worst, e)
		t.Logf("%-22s %4d/%4d entries  max|grad| %.1e  rel err %.2e", name, len(idx), len(v), maxAbs(n), e)
		if e > gradTol || math.IsNaN(e) {
			t.Errorf("%s: gradient rel err %.3e > %.0e", name, e, gradTol)
		}
	}
	return worst
}

func TestGradConv2D(t *testing.T) {
	cases := []struct {
		name                                    string
		n, inC, h, w, outC, kernel, stride, pad int
	}{
		{"3x3 s1 p1", 2, 3, 6, 5, 4, 3, 1, 1},
		{"3x3 s2 p1", 3, 2, 7, 6, 3, 3, 2, 1},
		{"2x2 s2 p0", 2, 2, 6, 6, 3, 2, 2, 0},
		{"3x3 s3 p2", 2, 2, 7, 8, 2, 3, 3, 2},
		{"1x1 s1 p0", 3, 4, 3, 5, 2, 1, 1, 0},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rng := newRNG(uint64(10 + i))
			l := NewConv2D(rng, "conv", c.inC, c.outC, c.kernel, c.stride, c.pad)
			// Non-zero bias so it is exercised in the forward pass too.
			for j, b := range f64(randTensor(rng, 0.5, c.outC)) {
				f64(l.Bias.Value)[j] = b
			}
			gradCheck(t, l, randTensor(rng, 1, c.n, c.inC, c.h, c.w), true, 60)
		})
	}
}

func TestGradBatchNorm2D(t *testing.T) {
	for _, train := range []bool{true, false} {
		name := map[bool]string{true: "train", false: "eval"}[train]
		t.Run(name, func(t *testing.T) {
			rng := newRNG(20)
			l := NewBatchNorm2D("bn", 3)
			for _, p := range CheckpointParams(l) {
				for j := range f64(p.Value) {
					f64(p.Value)[j] += 0.3 * rng.NormFloat64()
				}
			}
			f64(l.RunningVar.Value)[0] = 1.7 // keep the variance positive
			f64(l.RunningVar.Value)[1] = 0.6
			f64(l.RunningVar.Value)[2] = 2.2
			x := randTensor(rng, 2, 4, 3, 3, 2)
			// Shift channels so mean removal matters.
			for j := range f64(x) {
				f64(x)[j] += float64((j / 6) % 3)
			}
			gradCheck(t, l, x, train, 1000)
		})
	}
}

func TestGradGELU(t *testing.T) {
	rng := newRNG(30)
	gradCheck(t, NewGELU(), randTensor(rng, 2, 3, 2, 4, 5), true, 1000)
}

func TestGradGlobalAvgPool(t *testing.T) {
	rng := newRNG(40)
	gradCheck(t, NewGlobalAvgPool(), randTensor(rng, 1, 2, 3, 4, 5), true, 1000)
}

func TestGradFlatten(t *testing.T) {
	rng := newRNG(45)
	gradCheck(t, NewSequential(NewFlatten(), NewDense(rng, "fc", 24, 3)), randTensor(rng, 1, 2, 3, 2, 4), true, 1000)
}

func TestGradDense(t *testing.T) {
	rng := newRNG(50)
	l := NewDense(rng, "fc", 7, 4)
	for j := range f64(l.Bias.Value) {
		f64(l.Bias.Value)[j] = rng.NormFloat64()
	}
	gradCheck(t, l, randTensor(rng, 1, 5, 7), true, 1000)
}

func TestGradPaperEncoder(t *testing.T) {
	for _, train := range []bool{true, false} {
		name := map[bool]string{true: "train", false: "eval"}[train]
		t.Run(name, func(t *testing.T) {
			rng := newRNG(60)
			enc := NewPaperEncoder(rng, []int{2, 3, 4}, 5)
			x := randTensor(rng, 1, 3, 1, 9, 9)
			if !train {
				// Give eval mode non-trivial running statistics first.
				if _, err := enc.Forward(randTensor(rng, 1, 6, 1, 9, 9), true); err != nil {
					t.Fatal(err)
				}
			}
			worst := gradCheck(t, enc, x, train, 1000)
			t.Logf("worst rel err %.2e", worst)
		})
	}
}

func maxAbs(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = max(m, math.Abs(x))
	}
	return m
}
