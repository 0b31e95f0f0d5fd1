package modes

import (
	"fmt"
	"math"
)

// A readout is a static, slightly nonlinear function of the displacement
// — flow's linearised brightness, a tracker's interpolated template, a
// codec's gain that falls with amplitude: x = c + g(u), g(u) = u + c₂u² +
// c₃u³. Of a sum of decaying modes u = Σ_i A_i e^{−σ_i t} cos(ω_i t + φ_i)
// its powers hold combination tones e^{−(Σ|k_i|σ_i) t} cos((Σ k_i ω_i) t
// + …), Σ|k_i| = 2, 3: each mode's harmonics 2f_i and 3f_i, the
// intermodulation f_j ± f_i and 2f_i ± f_j — and, at each mode's own
// frequency, a part decaying faster than the mode (3σ_i, σ_i + 2σ_j)
// that biases its damping. A 1 Hz mode at 0.6 px read by flow put 3f₁ at
// 2.5 % of its amplitude, 0.3 Hz from a 2.7 Hz mode of 0.2 px, which was
// then refused for a poor fit; a 2.7 Hz mode at 3 px put 3f at 8 % and
// read ζ 25 % high. The joint fit therefore fits g with the modes (a
// Wiener model: linear modes seen through a static nonlinearity): the
// tones are then the modes' own, their frequencies and decay rates tied,
// and each mode's coordinate is taken back through g.

// readoutDegree is the degree of g fitted: its quadratic and cubic
// parts. checkDegree is the degree g is refitted with to see whether the
// modes still move with it.
const (
	readoutDegree = 3
	checkDegree   = 5
)

// minSlope is the least gain g'(u) over the record for g to be fitted: a
// readout whose gain halves over the swing is not a small-motion one.
const minSlope = 0.5

// FitReadout is Fit with the readout's static nonlinearity g fitted with
// the modes: Levenberg–Marquardt on θ = (σ_i, ω_i, a_i, b_i …, c, c₂, c₃)
// minimising
//
//	S(θ) = Σ_n (x_n − c − g(u(t_n)))²,  u(t) = Σ_i e^{−σ_i t}(a_i cos ω_i t + b_i sin ω_i t),
//
// from Fit's solution and a linear g; then again with g of degree
// checkDegree from that solution. Model.Poly holds c₂, c₃; Model.Shift
// how far each mode's (γ1, γ0) moved between the two — what the readout
// model leaves uncertain. Where either g's gain falls below minSlope
// over the record, the readout is not read as a small-motion one: the
// linear fit is returned with Model.Nonlinear saying so. Where the modes
// are each other's combination tones (tonesOnModes) g cannot be told
// from them and the linear fit is returned, once g of degree 3 has shown
// its gain bounded.
func FitReadout(x []float64, dt float64, omegas []float64, zeta0 float64) (*Model, error) {
	m, err := Fit(x, dt, omegas, zeta0)
	if err != nil || len(x) < 2*(4*len(omegas)+checkDegree) {
		return m, err
	}
	// θ starts at Fit's solution with g linear: c₂ = c₃ = 0.
	th := append(m.params(checkDegree-1), make([]float64, readoutDegree-1)...)
	th, ss := levenberg(th, x, dt, readoutDegree)
	w := model(th, ss, len(x), readoutDegree)
	if why := w.flat(len(x), dt); why != "" {
		m.Nonlinear = why
		return m, nil
	}
	if tonesOnModes(m.Terms, dt, len(x)) {
		return m, nil
	}
	th = append(th, make([]float64, checkDegree-readoutDegree)...)
	th, ss = levenberg(th, x, dt, checkDegree)
	hi := model(th, ss, len(x), checkDegree)
	if why := hi.flat(len(x), dt); why != "" {
		m.Nonlinear = why
		return m, nil
	}
	w.Shift = make([][2]float64, len(w.Terms))
	for i, tm := range w.Terms {
		g1, g0 := tm.Gammas()
		h1, h0 := hi.Terms[i].Gammas()
		w.Shift[i] = [2]float64{math.Abs(h1 - g1), math.Abs(h0 - g0)}
	}
	return w, nil
}

// tonesOnModes reports whether a combination tone of order 2 or 3 of the
// terms, |±ω_a ± ω_b| or |±ω_a ± ω_b ± ω_c| (no term with both signs,
// folded into [0, π/dt] as sampling folds it), lies within one frequency
// bin 2π/(n·dt) of a term's own frequency. g is then not told from that
// mode — a cable's harmonics at equal ζ decay as its first's square and
// cube do, at the same frequencies — and the readout is read as linear,
// as a readout of such modes always was.
func tonesOnModes(terms []Term, dt float64, n int) bool {
	bin := 2 * math.Pi / (float64(n) * dt)
	ws := make([]float64, len(terms))
	for i, tm := range terms {
		ws[i] = tm.Omega
	}
	return anyTone(ws, func(w float64) bool {
		w = math.Abs(math.Remainder(w, 2*math.Pi/dt))
		for _, tm := range terms {
			if math.Abs(tm.Omega-w) < bin {
				return true
			}
		}
		return false
	})
}

// anyTone reports whether on holds for a combination tone of order 2 or
// 3 of the angular frequencies ws: ω_a + ω_b, ω_a − ω_b (a ≠ b) and
// ω_a ± ω_b ± ω_c, up to sign (the harmonics 2ω_a and 3ω_a among them).
func anyTone(ws []float64, on func(w float64) bool) bool {
	k := len(ws)
	for a := range k {
		for b := a; b < k; b++ {
			wa, wb := ws[a], ws[b]
			if on(wa+wb) || (a != b && on(wa-wb)) {
				return true
			}
			for c := b; c < k; c++ {
				wc := ws[c]
				// Signs (+, ±, ±) cover every tone up to its sign; an index
				// repeated must keep its sign.
				for _, sb := range []float64{1, -1} {
					for _, sc := range []float64{1, -1} {
						if (b == a && sb < 0) || (c == b && sc != sb) || (c == a && sc < 0) {
							continue
						}
						if on(wa + sb*wb + sc*wc) {
							return true
						}
					}
				}
			}
		}
	}
	return false
}

// flat says where the model's readout gain g'(u(t)) falls below
// minSlope over n samples ("" when it never does).
func (m *Model) flat(n int, dt float64) string {
	for j := range n {
		t := float64(j) * dt
		if s := m.Slope(t); !(s >= minSlope) {
			return fmt.Sprintf("the readout is not linear over the swing: its fitted gain g'(u) (degree %d) falls to %.2g at %.2f s, where u = %.3g", len(m.Poly)+1, s, t, m.U(t))
		}
	}
	return ""
}

// Coordinate is mode i's coordinate in x, the model's other modes and the
// readout's nonlinearity taken out: the residual taken back through g
// to first order,
//
//	q_i(t_n) = T_i(t_n) + (x_n − c − g(u(t_n))) / g'(u(t_n)),
//
// which for a linear readout is x_n − c − Σ_{j≠i} T_j(t_n). It writes the
// first len(q) samples.
func (m *Model) Coordinate(q, x []float64, i int, dt float64) {
	for n := range q {
		t := float64(n) * dt
		g, dg := poly(m.Poly, m.U(t))
		q[n] = m.Terms[i].At(t) + (x[n]-(m.Offset+g))/dg
	}
}
