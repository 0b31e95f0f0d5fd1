package estimator

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/physd/physd/estimator/nn"
)

// train runs the preset's gradient steps on the loss (Eq. loss-total,
// loss-total-multi) from the initial coefficients, or fewer when the
// budget, counted from start, runs out. It returns the coefficients and
// the steps taken.
func (f *fitRun) train(ctx context.Context, start time.Time) (Coefficients, int, error) {
	p := f.p
	coef := Coefficients{Gamma1: p.InitGamma[0], Gamma0: p.InitGamma[1]}
	adam := nn.NewAdam(p.LREncoder)
	gAdam := newScalarAdam(p.LRGamma, 3)
	if !f.freeze && p.Steps > 0 {
		f.h = nil // W trains
	}
	steps := 0
	for step := range p.Steps {
		if err := ctx.Err(); err != nil {
			return coef, steps, fmt.Errorf("fit: interrupted at step %d of %d: %w", step, p.Steps, err)
		}
		var loss float64
		var err error
		if coef, loss, err = f.trainStep(step, coef, adam, gAdam); err != nil {
			return coef, steps, err
		}
		steps++
		if f.opt.Progress != nil {
			f.opt.Progress(step+1, p.Steps, loss)
		}
		if f.opt.Budget > 0 && time.Since(start) > f.opt.Budget {
			break
		}
	}
	return coef, steps, nil
}

// trainStep is one gradient step of the encoder (adam) and, unless they
// are solved for by least squares at every step, of the coefficients
// (gAdam). It returns the coefficients after the step and the loss
// before it.
func (f *fitRun) trainStep(step int, coef Coefficients, adam *nn.Adam, gAdam *scalarAdam) (Coefficients, float64, error) {
	p := f.p
	z, back, err := f.pass(f.frames.all)
	if err != nil {
		return coef, 0, fmt.Errorf("fit: step %d: %w", step, err)
	}
	lat := f.frames.split(z)
	if err := checkFinite(lat); err != nil {
		return coef, 0, fmt.Errorf("fit: step %d: %w: %w", step, ErrDiverged, err)
	}
	if p.SolveGamma {
		s, err := fitODECoef(lat, f.dt, p.Loss.Offset)
		if errors.Is(err, ErrNotFinite) {
			return coef, 0, fmt.Errorf("fit: step %d: %w: %w", step, ErrDiverged, err)
		}
		if err != nil {
			return coef, 0, fmt.Errorf("fit: step %d: %w", step, err)
		}
		coef = Coefficients{Gamma1: s.Gamma1, Gamma0: s.Gamma0, G: s.G}
	}
	loss, dz, dc := Objective(lat, f.dt, coef, p.Loss)
	if math.IsNaN(loss) || math.IsInf(loss, 0) {
		return coef, loss, fmt.Errorf("fit: step %d: loss is %g: %w", step, loss, ErrDiverged)
	}
	nn.ZeroGrad(f.params)
	flat := make([]float64, 0, len(f.frames.all))
	for _, d := range dz {
		flat = append(flat, d...)
	}
	if err := back(flat); err != nil {
		return coef, loss, fmt.Errorf("fit: step %d: backward: %w", step, err)
	}
	adam.Step(f.params)
	if !p.SolveGamma {
		v := []float64{coef.Gamma1, coef.Gamma0, coef.G}
		gAdam.step(v, []float64{dc.Gamma1, dc.Gamma0, dc.G})
		coef = Coefficients{Gamma1: v[0], Gamma0: v[1], G: v[2]}
		if p.Loss.Offset != SharedOffset {
			coef.G = 0
		}
	}
	return coef, loss, nil
}

// scalarAdam is Adam for a handful of scalars (the ODE coefficients).
type scalarAdam struct {
	lr   float64
	m, v []float64
	t    int
}

func newScalarAdam(lr float64, n int) *scalarAdam {
	return &scalarAdam{lr: lr, m: make([]float64, n), v: make([]float64, n)}
}

func (a *scalarAdam) step(x, g []float64) {
	const b1, b2, eps = 0.9, 0.999, 1e-8
	a.t++
	c1 := 1 - math.Pow(b1, float64(a.t))
	c2 := 1 - math.Pow(b2, float64(a.t))
	for i := range x {
		a.m[i] = b1*a.m[i] + (1-b1)*g[i]
		a.v[i] = b2*a.v[i] + (1-b2)*g[i]*g[i]
		x[i] -= a.lr * (a.m[i] / c1) / (math.Sqrt(a.v[i]/c2) + eps)
	}
}
