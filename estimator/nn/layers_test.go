package nn

import (
	"errors"
	"math"
	"testing"

	"gorgonia.org/tensor"
)

// naiveConv is the textbook definition of Conv2D's forward pass.
func naiveConv(x []float64, n, c, h, w int, wt, b []float64, oc, k, s, p int) ([]float64, int, int) {
	oh, ow := (h+2*p-k)/s+1, (w+2*p-k)/s+1
	y := make([]float64, n*oc*oh*ow)
	for in := 0; in < n; in++ {
		for o := 0; o < oc; o++ {
			for i := 0; i < oh; i++ {
				for j := 0; j < ow; j++ {
					sum := b[o]
					for ci := 0; ci < c; ci++ {
						for u := 0; u < k; u++ {
							for v := 0; v < k; v++ {
								yy, xx := i*s-p+u, j*s-p+v
								if yy < 0 || yy >= h || xx < 0 || xx >= w {
									continue
								}
								sum += wt[((o*c+ci)*k+u)*k+v] * x[((in*c+ci)*h+yy)*w+xx]
							}
						}
					}
					y[((in*oc+o)*oh+i)*ow+j] = sum
				}
			}
		}
	}
	return y, oh, ow
}

func TestConv2DMatchesNaive(t *testing.T) {
	cases := []struct{ n, c, h, w, oc, k, s, p int }{
		{5, 3, 8, 7, 4, 3, 1, 1},
		{5, 3, 9, 9, 4, 3, 2, 1},
		{3, 1, 64, 64, 8, 3, 2, 1},
		{2, 2, 5, 6, 3, 2, 2, 0},
		{2, 2, 7, 5, 3, 3, 3, 2},
		{4, 3, 4, 4, 2, 1, 1, 0},
		{2, 2, 3, 3, 2, 5, 1, 2},
		{1, 2, 1, 1, 3, 3, 1, 1},
	}
	for i, c := range cases {
		rng := newRNG(uint64(100 + i))
		l := NewConv2D(rng, "conv", c.c, c.oc, c.k, c.s, c.p)
		copy(f64(l.Bias.Value), f64(randTensor(rng, 1, c.oc)))
		x := randTensor(rng, 1, c.n, c.c, c.h, c.w)
		y, err := l.Forward(x, false)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		want, oh, ow := naiveConv(f64(x), c.n, c.c, c.h, c.w, f64(l.Weight.Value), f64(l.Bias.Value), c.oc, c.k, c.s, c.p)
		if got := []int(y.Shape()); !sameShape(got, []int{c.n, c.oc, oh, ow}) {
			t.Fatalf("case %d: shape %v, want %v", i, got, []int{c.n, c.oc, oh, ow})
		}
		for j, v := range f64(y) {
			if math.Abs(v-want[j]) > 1e-12*(1+math.Abs(want[j])) {
				t.Fatalf("case %+v: y[%d] = %v, want %v", c, j, v, want[j])
			}
		}
	}
}

func TestGELUValues(t *testing.T) {
	// Reference values of x·Φ(x).
	for _, c := range []struct{ x, y float64 }{
		{0, 0}, {1, 0.8413447460685429}, {-1, -0.15865525393145707}, {3, 2.99595030590511},
	} {
		y, err := NewGELU().Forward(fromSlice([]float64{c.x}, 1, 1), false)
		if err != nil {
			t.Fatal(err)
		}
		if got := f64(y)[0]; math.Abs(got-c.y) > 1e-15 {
			t.Errorf("GELU(%v) = %v, want %v", c.x, got, c.y)
		}
	}
}

func TestGELULargeParallel(t *testing.T) {
	// Large enough to be split across goroutines; each entry must still
	// match the scalar formula and the derivative Φ(x) + x·φ(x).
	rng := newRNG(6)
	x := randTensor(rng, 2, 3, 5, 100, 101)
	dy := randTensor(rng, 1, 3, 5, 100, 101)
	g := NewGELU()
	y, err := g.Forward(x, true)
	if err != nil {
		t.Fatal(err)
	}
	dx, err := g.Backward(dy)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range f64(x) {
		cdf := 0.5 * math.Erfc(-v/math.Sqrt2)
		pdf := math.Exp(-v*v/2) / math.Sqrt(2*math.Pi)
		if d := math.Abs(f64(y)[i] - v*cdf); d > 1e-14 {
			t.Fatalf("y[%d] off by %v", i, d)
		}
		if d := math.Abs(f64(dx)[i] - f64(dy)[i]*(cdf+v*pdf)); d > 1e-13 {
			t.Fatalf("dx[%d] off by %v", i, d)
		}
	}
}

func TestBatchNormStatistics(t *testing.T) {
	rng := newRNG(7)
	bn := NewBatchNorm2D("bn", 2)
	x := randTensor(rng, 3, 4, 2, 3, 3)
	y, err := bn.Forward(x, true)
	if err != nil {
		t.Fatal(err)
	}
	// Each output channel has mean 0 and biased variance 1/(1+ε/σ²) ≈ 1.
	const m = 4 * 9
	for c := 0; c < 2; c++ {
		var xs, ys []float64
		for n := 0; n < 4; n++ {
			off := (n*2 + c) * 9
			xs = append(xs, f64(x)[off:off+9]...)
			ys = append(ys, f64(y)[off:off+9]...)
		}
		mx, vx := meanVar(xs)
		my, vy := meanVar(ys)
		if math.Abs(my) > 1e-12 || math.Abs(vy-vx/(vx+1e-5)) > 1e-12 {
			t.Errorf("channel %d: output mean %v var %v", c, my, vy)
		}
		rm, rv := f64(bn.RunningMean.Value)[c], f64(bn.RunningVar.Value)[c]
		if math.Abs(rm-0.1*mx) > 1e-12 || math.Abs(rv-(0.9+0.1*vx*m/(m-1))) > 1e-12 {
			t.Errorf("channel %d: running mean %v var %v", c, rm, rv)
		}
	}
	// Eval mode uses the running statistics and leaves them unchanged.
	before := append([]float64(nil), f64(bn.RunningVar.Value)...)
	ye, err := bn.Forward(x, false)
	if err != nil {
		t.Fatal(err)
	}
	if f64(bn.RunningVar.Value)[0] != before[0] {
		t.Error("eval forward changed running variance")
	}
	x0 := f64(x)[0]
	want := (x0 - f64(bn.RunningMean.Value)[0]) / math.Sqrt(before[0]+1e-5)
	if math.Abs(f64(ye)[0]-want) > 1e-12 {
		t.Errorf("eval y[0] = %v, want %v", f64(ye)[0], want)
	}
}

func meanVar(v []float64) (mean, variance float64) {
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	for _, x := range v {
		variance += (x - mean) * (x - mean)
	}
	return mean, variance / float64(len(v))
}

func TestEncoderShapesAndEvalIndependence(t *testing.T) {
	rng := newRNG(8)
	enc := NewPaperEncoder(rng, nil, 0)
	if got, want := NumParams(enc.Params()), 303969; got != want {
		// 3×3 convs 1→32→32→64→64→128→128 with biases, 6 BN (γ,β),
		// Dense 128→128 and 128→1.
		t.Errorf("NumParams = %d, want %d", got, want)
	}
	if got := len(enc.Buffers()); got != 12 {
		t.Errorf("%d buffers, want 12", got)
	}
	x := randTensor(rng, 1, 3, 1, 20, 20)
	if _, err := enc.Forward(x, true); err != nil { // non-trivial running stats
		t.Fatal(err)
	}
	y, err := enc.Forward(x, false)
	if err != nil {
		t.Fatal(err)
	}
	if !sameShape(y.Shape(), []int{3, 1}) {
		t.Fatalf("output shape %v, want (3, 1)", y.Shape())
	}
	// In eval mode each frame's latent must not depend on the rest of the batch.
	for n := 0; n < 3; n++ {
		xn := fromSlice(append([]float64(nil), f64(x)[n*400:(n+1)*400]...), 1, 1, 20, 20)
		yn, err := enc.Forward(xn, false)
		if err != nil {
			t.Fatal(err)
		}
		if d := math.Abs(f64(yn)[0] - f64(y)[n]); d > 1e-12 {
			t.Errorf("frame %d: batched %v, alone %v", n, f64(y)[n], f64(yn)[0])
		}
	}
}

func TestShapeErrors(t *testing.T) {
	rng := newRNG(9)
	type tc struct {
		name string
		l    Layer
		x    *tensor.Dense
	}
	cases := []tc{
		{"conv rank", NewConv2D(rng, "c", 2, 3, 3, 1, 1), zeros(2, 2, 5)},
		{"conv channels", NewConv2D(rng, "c", 2, 3, 3, 1, 1), zeros(1, 3, 5, 5)},
		{"conv too small", NewConv2D(rng, "c", 2, 3, 5, 1, 0), zeros(1, 2, 4, 9)},
		{"conv nil", NewConv2D(rng, "c", 2, 3, 3, 1, 1), nil},
		{"conv float32", NewConv2D(rng, "c", 1, 3, 3, 1, 1), tensor.New(tensor.WithShape(1, 1, 4, 4), tensor.Of(tensor.Float32))},
		{"bn channels", NewBatchNorm2D("bn", 4), zeros(2, 3, 2, 2)},
		{"bn rank", NewBatchNorm2D("bn", 4), zeros(2, 4)},
		{"gelu rank", NewGELU(), zeros(3)},
		{"pool rank", NewGlobalAvgPool(), zeros(2, 3, 4)},
		{"dense width", NewDense(rng, "fc", 4, 2), zeros(3, 5)},
		{"dense rank", NewDense(rng, "fc", 4, 2), zeros(3, 4, 1)},
		{"flatten rank", NewFlatten(), zeros(5)},
		{"encoder channels", NewPaperEncoder(rng, []int{2, 3, 4}, 5), zeros(1, 3, 9, 9)},
		{"zero batch", NewGELU(), tensor.New(tensor.WithShape(0, 4), tensor.Of(tensor.Float64))},
	}
	for _, c := range cases {
		_, err := c.l.Forward(c.x, true)
		if !errors.Is(err, ErrShape) {
			t.Errorf("%s: err = %v, want ErrShape", c.name, err)
		}
	}

	// Backward before Forward, and with a wrongly shaped gradient.
	conv := NewConv2D(rng, "c", 1, 2, 3, 2, 1)
	if _, err := conv.Backward(zeros(1, 2, 3, 3)); !errors.Is(err, ErrNoForward) {
		t.Errorf("backward before forward: err = %v", err)
	}
	if _, err := conv.Forward(zeros(1, 1, 6, 6), true); err != nil {
		t.Fatal(err)
	}
	if _, err := conv.Backward(zeros(1, 2, 6, 6)); !errors.Is(err, ErrShape) {
		t.Errorf("wrong dy shape: err = %v", err)
	} else {
		t.Logf("example error: %v", err)
	}
	enc := NewPaperEncoder(rng, []int{2, 3, 4}, 5)
	if _, err := enc.Forward(zeros(2, 1, 9, 9), true); err != nil {
		t.Fatal(err)
	}
	if _, err := enc.Backward(zeros(3, 1)); !errors.Is(err, ErrShape) {
		t.Errorf("encoder wrong dy: err = %v", err)
	}
}

func TestViewInput(t *testing.T) {
	// A sliced view must give the same result as its materialised copy.
	rng := newRNG(11)
	big := randTensor(rng, 1, 4, 1, 6, 6)
	view, err := big.Slice(tensor.S(1, 3))
	if err != nil {
		t.Fatal(err)
	}
	conv := NewConv2D(rng, "c", 1, 2, 3, 2, 1)
	y1, err := conv.Forward(view.(*tensor.Dense), false)
	if err != nil {
		t.Fatal(err)
	}
	y2, err := conv.Forward(fromSlice(append([]float64(nil), f64(big)[36:108]...), 2, 1, 6, 6), false)
	if err != nil {
		t.Fatal(err)
	}
	for i := range f64(y1) {
		if f64(y1)[i] != f64(y2)[i] {
			t.Fatalf("view result differs at %d", i)
		}
	}
}

func TestAdamTwoSteps(t *testing.T) {
	p := newParam("p", 2)
	copy(f64(p.Value), []float64{1, -2})
	opt := NewAdam(0.1)
	for _, g := range [][]float64{{0.5, -1}, {-0.25, 2}} {
		copy(f64(p.Grad), g)
		opt.Step([]*Param{p, {Name: "buffer", Value: zeros(1)}})
	}
	// By hand: step 1 has m̂ = g, v̂ = g², so θ moves by 0.1·g/(|g|+1e-8).
	// Step 2: m = (0.02, 0.11), v = (3.1225e-4, 4.999e-3), m̂ = m/0.19,
	// v̂ = v/0.001999, θ −= 0.1·m̂/(√v̂ + 1e-8).
	want := []float64{0.8733662987078463, -1.9366103534720749}
	for i, w := range want {
		if got := f64(p.Value)[i]; math.Abs(got-w) > 1e-14 {
			t.Errorf("θ[%d] = %.17g, want %.17g", i, got, w)
		}
	}
}

func TestZeroGradAndAccumulate(t *testing.T) {
	rng := newRNG(12)
	d := NewDense(rng, "fc", 3, 2)
	x := randTensor(rng, 1, 4, 3)
	dy := randTensor(rng, 1, 4, 2)
	run := func() {
		if _, err := d.Forward(x, true); err != nil {
			t.Fatal(err)
		}
		if _, err := d.Backward(dy); err != nil {
			t.Fatal(err)
		}
	}
	ZeroGrad(d.Params())
	run()
	once := append([]float64(nil), f64(d.Weight.Grad)...)
	run()
	for i, g := range f64(d.Weight.Grad) {
		if math.Abs(g-2*once[i]) > 1e-12 {
			t.Fatalf("gradient not accumulated: %v vs 2·%v", g, once[i])
		}
	}
	ZeroGrad(d.Params())
	if maxAbs(f64(d.Weight.Grad)) != 0 {
		t.Fatal("ZeroGrad left non-zero gradient")
	}
}
