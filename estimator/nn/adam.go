package nn

import (
	"fmt"
	"math"
)

// Adam is the Adam optimiser (Kingma & Ba 2015) with bias correction. For
// each trainable Param θ with gradient g, after t = 1, 2, … steps of that
// Param:
//
//	m ← β₁·m + (1−β₁)·g,   v ← β₂·v + (1−β₂)·g²,
//	m̂ = m/(1−β₁ᵗ),  v̂ = v/(1−β₂ᵗ),
//	θ ← θ − LR·m̂/(√v̂ + Eps).
//
// Moment estimates are kept per *Param, so Step must be given the same
// Param pointers each time. Params with a nil Grad are skipped.
type Adam struct {
	LR, Beta1, Beta2, Eps float64

	state map[*Param]*adamState
}

type adamState struct {
	m, v []float64
	t    int
}

// NewAdam returns Adam with learning rate lr and the usual defaults
// β₁ = 0.9, β₂ = 0.999, Eps = 1e-8.
func NewAdam(lr float64) *Adam {
	return &Adam{LR: lr, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}
}

// Step applies one update to every Param with a non-nil Grad, reading the
// accumulated gradients (it does not zero them). It panics if a Param's
// Grad size differs from its Value size or changes between calls, which
// cannot happen for Params built by this package.
func (a *Adam) Step(params []*Param) {
	if a.state == nil {
		a.state = make(map[*Param]*adamState)
	}
	for _, p := range params {
		if p == nil || p.Grad == nil {
			continue
		}
		w := p.Value.Data().([]float64)
		g := p.Grad.Data().([]float64)
		if len(w) != len(g) {
			panic(fmt.Sprintf("nn: Adam: param %q has %d values but %d gradients", p.Name, len(w), len(g)))
		}
		s := a.state[p]
		if s == nil {
			s = &adamState{m: make([]float64, len(w)), v: make([]float64, len(w))}
			a.state[p] = s
		}
		if len(s.m) != len(w) {
			panic(fmt.Sprintf("nn: Adam: param %q changed size from %d to %d", p.Name, len(s.m), len(w)))
		}
		s.t++
		c1 := 1 - math.Pow(a.Beta1, float64(s.t))
		c2 := 1 - math.Pow(a.Beta2, float64(s.t))
		for i, gi := range g {
			s.m[i] = a.Beta1*s.m[i] + (1-a.Beta1)*gi
			s.v[i] = a.Beta2*s.v[i] + (1-a.Beta2)*gi*gi
			w[i] -= a.LR * (s.m[i] / c1) / (math.Sqrt(s.v[i]/c2) + a.Eps)
		}
	}
}
