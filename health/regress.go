package health

import (
	"errors"
	"fmt"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// Term is one regressor of the baseline: a covariate's name ("temperature"),
// its square ("temperature^2") or the product of two ("temperature*wind").
type Term string

// factors are the covariates whose product the term is.
func (t Term) factors() ([]string, error) {
	s := strings.TrimSpace(string(t))
	if s == "" {
		return nil, errors.New("health: an empty term")
	}
	if name, ok := strings.CutSuffix(s, "^2"); ok {
		return []string{strings.TrimSpace(name), strings.TrimSpace(name)}, nil
	}
	var out []string
	for _, f := range strings.Split(s, "*") {
		f = strings.TrimSpace(f)
		if f == "" {
			return nil, fmt.Errorf("health: term %q: an empty factor", t)
		}
		out = append(out, f)
	}
	return out, nil
}

// value is the term at covariates c; ok is false when one is missing.
func (t Term) value(c map[string]float64) (float64, bool) {
	fs, err := t.factors()
	if err != nil {
		return 0, false
	}
	v := 1.0
	for _, f := range fs {
		x, ok := c[f]
		if !ok {
			return 0, false
		}
		v *= x
	}
	return v, true
}

// Covariates are the covariate names the terms read.
func Covariates(terms []Term) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, t := range terms {
		fs, err := t.factors()
		if err != nil {
			return nil, err
		}
		for _, f := range fs {
			if !seen[f] {
				seen[f] = true
				out = append(out, f)
			}
		}
	}
	return out, nil
}

// Model is the baseline's regression ŷ(c) = β₀ + Σ_k β_k x_k(c), x_k the
// terms at the covariates c.
type Model struct {
	Terms []Term
	// Coef holds β₀ then one coefficient per term.
	Coef []float64
}

// At is ŷ(c); ok is false when a covariate a term needs is missing.
func (m *Model) At(c map[string]float64) (float64, bool) {
	y := m.Coef[0]
	for k, t := range m.Terms {
		x, ok := t.value(c)
		if !ok {
			return 0, false
		}
		y += m.Coef[k+1] * x
	}
	return y, true
}

// fitModel fits ŷ by least squares to the points (which all carry every
// covariate the terms read), solving min ‖Xβ − y‖² by QR. It fails when
// there are no more points than coefficients or the terms are collinear
// over the points (a covariate that did not vary).
func fitModel(terms []Term, pts []point) (*Model, error) {
	p := len(terms) + 1
	if len(pts) <= p {
		return nil, fmt.Errorf("health: %d points for %d coefficients", len(pts), p)
	}
	x := mat.NewDense(len(pts), p, nil)
	y := mat.NewVecDense(len(pts), nil)
	for i, pt := range pts {
		x.Set(i, 0, 1)
		for k, t := range terms {
			v, ok := t.value(pt.cov)
			if !ok {
				return nil, fmt.Errorf("health: point %d lacks a covariate of %q", i, t)
			}
			x.Set(i, k+1, v)
		}
		y.SetVec(i, pt.y)
	}
	var qr mat.QR
	qr.Factorize(x)
	var beta mat.VecDense
	if err := qr.SolveVecTo(&beta, false, y); err != nil {
		return nil, fmt.Errorf("health: the terms %v do not vary independently over the baseline: %w", terms, err)
	}
	// A condition number this large is a covariate that barely moved:
	// its coefficient would be noise.
	if c := mat.Cond(x, 2); !(c < 1e10) {
		return nil, fmt.Errorf("health: the terms %v do not vary independently over the baseline (condition %.3g)", terms, c)
	}
	m := &Model{Terms: terms, Coef: make([]float64, p)}
	for k := range p {
		m.Coef[k] = beta.AtVec(k)
	}
	return m, nil
}
