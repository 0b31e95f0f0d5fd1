package nn

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gorgonia.org/tensor"
)

// Conv2D is a 2-D cross-correlation with square kernels, equal stride and
// zero padding on both axes, and a per-channel bias:
//
//	y[n,o,i,j] = b[o] + Σ_{c,u,v} W[o,c,u,v] · x[n,c, i·S−P+u, j·S−P+v]
//
// with x taken as 0 outside the image. Input (N, InC, H, W), output
// (N, OutC, Ho, Wo) where Ho = ⌊(H + 2P − K)/S⌋ + 1 and likewise Wo.
// Weight has shape (OutC, InC, K, K) and Bias (OutC).
//
// It is computed per sample as im2col + GEMM: the patch matrix
// col (InC·K·K × Ho·Wo) turns the layer into Y_n = W · col + b.
type Conv2D struct {
	Name                           string
	InC, OutC, Kernel, Stride, Pad int
	Weight, Bias                   *Param

	// Forward cache.
	x     []float64 // input data, referenced not copied
	g     convGeom
	ready bool

	// Per-worker scratch, grown on demand and reused across calls.
	work []convScratch
}

// convScratch is one worker's private buffers, so workers never share memory
// they write.
type convScratch struct {
	col, dcol []float64 // K·K·InC × Ho·Wo
	dw, db    []float64 // partial weight and bias gradients
}

// convGeom holds the sizes of one convolution call.
type convGeom struct {
	n, c, h, w     int // input
	oc, oh, ow     int // output
	k, stride, pad int
}

func (g convGeom) rows() int { return g.c * g.k * g.k } // patch length, GEMM inner dimension
func (g convGeom) cols() int { return g.oh * g.ow }     // output pixels per channel

// NewConv2D returns a Conv2D with He (Kaiming) normal weights,
// W ~ N(0, 2/(inC·K·K)), which keeps activation variance roughly constant
// through ReLU-like nonlinearities, and zero bias. Parameter names are
// name+".weight" and name+".bias". It panics if any size is not positive
// or pad is negative.
func NewConv2D(rng *rand.Rand, name string, inC, outC, kernel, stride, pad int) *Conv2D {
	if inC < 1 || outC < 1 || kernel < 1 || stride < 1 || pad < 0 {
		panic(fmt.Sprintf("nn: NewConv2D %q: invalid sizes inC=%d outC=%d kernel=%d stride=%d pad=%d", name, inC, outC, kernel, stride, pad))
	}
	c := &Conv2D{
		Name: name, InC: inC, OutC: outC, Kernel: kernel, Stride: stride, Pad: pad,
		Weight: newParam(name+".weight", outC, inC, kernel, kernel),
		Bias:   newParam(name+".bias", outC),
	}
	std := math.Sqrt(2 / float64(inC*kernel*kernel))
	w := c.Weight.Value.Data().([]float64)
	for i := range w {
		w[i] = std * rng.NormFloat64()
	}
	return c
}

// Params returns Weight and Bias.
func (c *Conv2D) Params() []*Param { return []*Param{c.Weight, c.Bias} }

func (c *Conv2D) who() string { return fmt.Sprintf("nn: Conv2D %q", c.Name) }

// Forward computes y (N, OutC, Ho, Wo) from x (N, InC, H, W).
func (c *Conv2D) Forward(x *tensor.Dense, train bool) (*tensor.Dense, error) {
	c.ready = false
	shape, xd, err := float64Data(c.who(), "input", x, 4, 4)
	if err != nil {
		return nil, err
	}
	if shape[1] != c.InC {
		return nil, fmt.Errorf("%s: input shape %v, want (N, %d, H, W): %w", c.who(), shape, c.InC, ErrShape)
	}
	g := convGeom{n: shape[0], c: shape[1], h: shape[2], w: shape[3], oc: c.OutC, k: c.Kernel, stride: c.Stride, pad: c.Pad}
	if g.h+2*g.pad < g.k || g.w+2*g.pad < g.k {
		return nil, fmt.Errorf("%s: input shape %v smaller than kernel %d with padding %d: %w", c.who(), shape, g.k, g.pad, ErrShape)
	}
	g.oh = (g.h+2*g.pad-g.k)/g.stride + 1
	g.ow = (g.w+2*g.pad-g.k)/g.stride + 1

	y := make([]float64, g.n*g.oc*g.cols())
	c.ensureScratch(g, false)
	wd := c.Weight.Value.Data().([]float64)
	bd := c.Bias.Value.Data().([]float64)
	inSize, outSize, kk, p := g.c*g.h*g.w, g.oc*g.cols(), g.rows(), g.cols()
	parallelRange(g.n, func(wk, lo, hi int) {
		s := &c.work[wk]
		for n := lo; n < hi; n++ {
			col := g.patches(xd[n*inSize:(n+1)*inSize], s.col)
			yn := y[n*outSize : (n+1)*outSize]
			// Y_n = b·1ᵀ + W·col: seed rows with the bias, then GEMM with β = 1.
			for o := 0; o < g.oc; o++ {
				row := yn[o*p : (o+1)*p]
				for j := range row {
					row[j] = bd[o]
				}
			}
			gemm(blas.NoTrans, blas.NoTrans, g.oc, p, kk, wd, kk, col, p, 1, yn, p)
		}
	})
	c.x, c.g, c.ready = xd, g, true
	return fromSlice(y, g.n, g.oc, g.oh, g.ow), nil
}

// Backward takes dy (N, OutC, Ho, Wo) and returns dx (N, InC, H, W),
// accumulating per sample n, with col_n the patch matrix of x_n:
//
//	dW += dY_n · col_nᵀ,  db[o] += Σ_{i,j} dy[n,o,i,j],  dx_n = col2im(Wᵀ · dY_n).
func (c *Conv2D) Backward(dy *tensor.Dense) (*tensor.Dense, error) {
	if !c.ready {
		return nil, fmt.Errorf("%s: %w", c.who(), ErrNoForward)
	}
	g := c.g
	shape, dyd, err := float64Data(c.who(), "output gradient", dy, 4, 4)
	if err != nil {
		return nil, err
	}
	if want := []int{g.n, g.oc, g.oh, g.ow}; !sameShape(shape, want) {
		return nil, fmt.Errorf("%s: output gradient shape %v, want %v: %w", c.who(), shape, want, ErrShape)
	}
	dx := make([]float64, g.n*g.c*g.h*g.w)
	c.ensureScratch(g, true)
	wd := c.Weight.Value.Data().([]float64)
	inSize, outSize, kk, p := g.c*g.h*g.w, g.oc*g.cols(), g.rows(), g.cols()
	workers := numWorkers(g.n)
	parallelRange(g.n, func(wk, lo, hi int) {
		s := &c.work[wk]
		clear(s.dw)
		clear(s.db)
		for n := lo; n < hi; n++ {
			col := g.patches(c.x[n*inSize:(n+1)*inSize], s.col)
			dyn := dyd[n*outSize : (n+1)*outSize]
			gemm(blas.NoTrans, blas.Trans, g.oc, kk, p, dyn, p, col, p, 1, s.dw, kk)
			for o := 0; o < g.oc; o++ {
				sum := 0.0
				for _, v := range dyn[o*p : (o+1)*p] {
					sum += v
				}
				s.db[o] += sum
			}
			gemm(blas.Trans, blas.NoTrans, kk, p, g.oc, wd, kk, dyn, p, 0, s.dcol, p)
			g.col2im(s.dcol, dx[n*inSize:(n+1)*inSize])
		}
	})
	// Reduce partial gradients in worker order for run-to-run determinism.
	gw := c.Weight.Grad.Data().([]float64)
	gb := c.Bias.Grad.Data().([]float64)
	for wk := 0; wk < workers; wk++ {
		for i, v := range c.work[wk].dw {
			gw[i] += v
		}
		for i, v := range c.work[wk].db {
			gb[i] += v
		}
	}
	return fromSlice(dx, g.n, g.c, g.h, g.w), nil
}

// ensureScratch sizes per-worker buffers for geometry g, reusing capacity.
func (c *Conv2D) ensureScratch(g convGeom, backward bool) {
	workers := numWorkers(g.n)
	for len(c.work) < workers {
		c.work = append(c.work, convScratch{})
	}
	size := g.rows() * g.cols()
	for i := range workers {
		s := &c.work[i]
		if !g.identity() {
			s.col = grow(s.col, size)
		}
		if backward {
			s.dcol = grow(s.dcol, size)
			s.dw = grow(s.dw, g.oc*g.rows())
			s.db = grow(s.db, g.oc)
		}
	}
}

// grow returns buf resliced to n elements, reallocating only if too small.
func grow(buf []float64, n int) []float64 {
	if cap(buf) < n {
		return make([]float64, n)
	}
	return buf[:n]
}

// identity reports whether im2col would be a plain copy (1×1 kernel,
// stride 1, no padding), in which case the image itself is the patch matrix.
func (g convGeom) identity() bool { return g.k == 1 && g.stride == 1 && g.pad == 0 }

// patches returns the patch matrix of one image x (C×H×W), writing it into
// col unless it is x itself.
func (g convGeom) patches(x, col []float64) []float64 {
	if g.identity() {
		return x
	}
	g.im2col(x, col)
	return col
}

// validOut returns the half-open range [lo, hi) of output coordinates o for
// which the input coordinate o·S − P + u lies inside [0, size).
func (g convGeom) validOut(u, size, out int) (lo, hi int) {
	// o·S ≥ P − u  ⇒  o ≥ ⌈(P−u)/S⌉.
	if d := g.pad - u; d > 0 {
		lo = (d + g.stride - 1) / g.stride
	}
	// o·S ≤ size−1+P−u  ⇒  o ≤ ⌊(size−1+P−u)/S⌋.
	d := size - 1 + g.pad - u
	if d < 0 {
		return 0, 0
	}
	hi = min(out, d/g.stride+1)
	lo = min(lo, hi)
	return lo, hi
}

// im2col unrolls one image x (C×H×W) into col (C·K·K × Ho·Wo):
//
//	col[(c·K+u)·K+v, i·Wo+j] = x[c, i·S−P+u, j·S−P+v], or 0 outside the image.
func (g convGeom) im2col(x, col []float64) {
	k, s, p, p2 := g.k, g.stride, g.pad, g.oh*g.ow
	for c := 0; c < g.c; c++ {
		xc := x[c*g.h*g.w : (c+1)*g.h*g.w]
		for u := 0; u < k; u++ {
			ilo, ihi := g.validOut(u, g.h, g.oh)
			for v := 0; v < k; v++ {
				row := col[((c*k+u)*k+v)*p2 : ((c*k+u)*k+v+1)*p2]
				jlo, jhi := g.validOut(v, g.w, g.ow)
				clear(row[:ilo*g.ow])
				clear(row[ihi*g.ow:])
				for i := ilo; i < ihi; i++ {
					dst := row[i*g.ow : (i+1)*g.ow]
					src := xc[(i*s-p+u)*g.w : (i*s-p+u+1)*g.w]
					clear(dst[:jlo])
					clear(dst[jhi:])
					if s == 1 {
						copy(dst[jlo:jhi], src[jlo-p+v:jhi-p+v])
						continue
					}
					for j := jlo; j < jhi; j++ {
						dst[j] = src[j*s-p+v]
					}
				}
			}
		}
	}
}

// col2im is the adjoint of im2col: it adds every entry of dcol back onto
// the input pixel it was copied from, dx[c, i·S−P+u, j·S−P+v] += dcol[r, i·Wo+j].
// Out-of-image entries (zero padding) have no input and are dropped.
func (g convGeom) col2im(dcol, dx []float64) {
	if g.identity() {
		for i, v := range dcol {
			dx[i] += v
		}
		return
	}
	k, s, p, p2 := g.k, g.stride, g.pad, g.oh*g.ow
	for c := 0; c < g.c; c++ {
		xc := dx[c*g.h*g.w : (c+1)*g.h*g.w]
		for u := 0; u < k; u++ {
			ilo, ihi := g.validOut(u, g.h, g.oh)
			for v := 0; v < k; v++ {
				row := dcol[((c*k+u)*k+v)*p2 : ((c*k+u)*k+v+1)*p2]
				jlo, jhi := g.validOut(v, g.w, g.ow)
				for i := ilo; i < ihi; i++ {
					src := row[i*g.ow : (i+1)*g.ow]
					dst := xc[(i*s-p+u)*g.w : (i*s-p+u+1)*g.w]
					if s == 1 {
						d := dst[jlo-p+v : jhi-p+v]
						for j, val := range src[jlo:jhi] {
							d[j] += val
						}
						continue
					}
					for j := jlo; j < jhi; j++ {
						dst[j*s-p+v] += src[j]
					}
				}
			}
		}
	}
}

// gemm computes C = A·B + β·C (with optional transposes) for row-major
// matrices through the blas64 implementation, so a faster BLAS installed
// with blas64.Use is picked up automatically. m×n is the shape of C and k
// the inner dimension.
func gemm(tA, tB blas.Transpose, m, n, k int, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	blas64.Implementation().Dgemm(tA, tB, m, n, k, 1, a, lda, b, ldb, beta, c, ldc)
}
