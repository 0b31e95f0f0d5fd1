package ambient

import (
	"errors"
	"fmt"
	"math"
)

// ErrOptions reports Correlation options out of range.
var ErrOptions = errors.New("ambient: invalid options")

// Correlation sums a latent's lagged products per segment of a sliding
// record. The zero value is not usable; see NewCorrelation.
type Correlation struct {
	lags   int       // τ = 0 … lags−1 frames
	segLen int       // latents a segment
	keep   int       // segments the record holds
	hist   []float64 // ring of the last lags latents
	n      int       // latents pushed
	segs   []*segment
	free   *segment // a dropped segment, reused
}

// segment holds the sums of the latents z_k pushed while it was open, and
// of their lagged products with the latents before them (which may lie in
// earlier segments).
type segment struct {
	n          int
	s1, s2     float64   // Σ z_k, Σ z_k²
	s3, s4     float64   // Σ z_k³, Σ z_k⁴
	prod       []float64 // Σ z_k z_{k−τ}
	lead, lagd []float64 // Σ z_k, Σ z_{k−τ} over the same pairs
	pairs      []int
}

// NewCorrelation returns a Correlation of lags lags (τ = 0 … lags−1
// frames) over a record of keep segments of segLen latents each: once
// more have been pushed, the oldest segment is dropped.
func NewCorrelation(lags, segLen, keep int) (*Correlation, error) {
	switch {
	case lags < 8:
		return nil, fmt.Errorf("%w: lags %d (want ≥ 8)", ErrOptions, lags)
	case segLen < 1:
		return nil, fmt.Errorf("%w: segment length %d (want ≥ 1)", ErrOptions, segLen)
	case keep < 2:
		return nil, fmt.Errorf("%w: %d segments (want ≥ 2, for a σ)", ErrOptions, keep)
	}
	return &Correlation{lags: lags, segLen: segLen, keep: keep, hist: make([]float64, lags)}, nil
}

func (c *Correlation) newSegment() *segment {
	s := c.free
	c.free = nil
	if s == nil {
		return &segment{prod: make([]float64, c.lags), lead: make([]float64, c.lags),
			lagd: make([]float64, c.lags), pairs: make([]int, c.lags)}
	}
	*s = segment{prod: s.prod, lead: s.lead, lagd: s.lagd, pairs: s.pairs}
	clear(s.prod)
	clear(s.lead)
	clear(s.lagd)
	clear(s.pairs)
	return s
}

// Push adds the next latent. A NaN (a frame that could not be read)
// breaks the lagged products across it: the latents before it are
// forgotten, as at the record's start.
//
//	prod_s(τ) += z_k·z_{k−τ},  τ = 0 … min(lags, run)−1,
//
// where run counts the latents since the last break.
func (c *Correlation) Push(z float64) {
	if len(c.segs) == 0 || c.segs[len(c.segs)-1].n == c.segLen {
		if len(c.segs) == c.keep {
			c.free = c.segs[0]
			copy(c.segs, c.segs[1:])
			c.segs = c.segs[:len(c.segs)-1]
		}
		c.segs = append(c.segs, c.newSegment())
	}
	s := c.segs[len(c.segs)-1]
	s.n++
	if math.IsNaN(z) || math.IsInf(z, 0) {
		c.n = 0
		return
	}
	c.hist[c.n%c.lags] = z
	c.n++
	z2 := z * z
	s.s1 += z
	s.s2 += z2
	s.s3 += z2 * z
	s.s4 += z2 * z2
	for tau := range min(c.lags, c.n) {
		p := c.hist[(c.n-1-tau)%c.lags]
		s.prod[tau] += z * p
		s.lead[tau] += z
		s.lagd[tau] += p
		s.pairs[tau]++
	}
}

// Frames is how many latents the record holds (its segments', NaNs
// included).
func (c *Correlation) Frames() int {
	var n int
	for _, s := range c.segs {
		n += s.n
	}
	return n
}

// Segments is how many segments the record holds, the last maybe open.
func (c *Correlation) Segments() int { return len(c.segs) }

// Lags is the number of lags summed.
func (c *Correlation) Lags() int { return c.lags }

// Signature returns the record's correlation function R(τ), τ = 0 …
// lags−1 frames, over the segments for which use(i) is true (nil: all):
//
//	R(τ) = (P − μ(A + B) + m·μ²)/m,  μ = Σz/n,
//
// P = Σ z_k z_{k−τ}, A = Σ z_k, B = Σ z_{k−τ} over the m pairs. It also
// returns the moments of the latents: their count, variance and kurtosis.
func (c *Correlation) Signature(use func(i int) bool) (r []float64, st Stats) {
	prod, lead, lagd := make([]float64, c.lags), make([]float64, c.lags), make([]float64, c.lags)
	pairs := make([]int, c.lags)
	var s1, s2, s3, s4 float64
	for i, s := range c.segs {
		if use != nil && !use(i) {
			continue
		}
		for tau := range c.lags {
			prod[tau] += s.prod[tau]
			lead[tau] += s.lead[tau]
			lagd[tau] += s.lagd[tau]
			pairs[tau] += s.pairs[tau]
		}
		s1, s2, s3, s4 = s1+s.s1, s2+s.s2, s3+s.s3, s4+s.s4
	}
	st.N = pairs[0]
	if st.N == 0 {
		return nil, st
	}
	n := float64(st.N)
	mu := s1 / n
	r = make([]float64, c.lags)
	for tau := range c.lags {
		m := float64(pairs[tau])
		if m == 0 {
			r[tau] = math.NaN()
			continue
		}
		r[tau] = (prod[tau] - mu*(lead[tau]+lagd[tau]) + m*mu*mu) / m
	}
	// Central moments from the raw ones: m2 = E z² − μ², m4 = E z⁴ − 4μ E z³ + 6μ² E z² − 3μ⁴.
	e2, e3, e4 := s2/n, s3/n, s4/n
	m2 := e2 - mu*mu
	m4 := e4 - 4*mu*e3 + 6*mu*mu*e2 - 3*mu*mu*mu*mu
	st.Variance = m2
	if m2 > 0 {
		st.Kurtosis = m4 / (m2 * m2)
	}
	return r, st
}

// Stats are the moments of a record's latents.
type Stats struct {
	// N is how many latents were summed.
	N int
	// Variance is their variance, latent units².
	Variance float64
	// Kurtosis is E(z−μ)⁴/σ⁴: 3 for a Gaussian response (broadband
	// forcing of a linear structure), 1.5 for a sinusoid (a forcing at
	// one frequency), between for a mixture.
	Kurtosis float64
}

// Clone returns a copy of the record's sums that shares nothing with c:
// a snapshot to identify from while c goes on summing.
func (c *Correlation) Clone() *Correlation {
	d := &Correlation{lags: c.lags, segLen: c.segLen, keep: c.keep, hist: append([]float64(nil), c.hist...), n: c.n,
		segs: make([]*segment, len(c.segs))}
	for i, s := range c.segs {
		t := *s
		t.prod = append([]float64(nil), s.prod...)
		t.lead = append([]float64(nil), s.lead...)
		t.lagd = append([]float64(nil), s.lagd...)
		t.pairs = append([]int(nil), s.pairs...)
		d.segs[i] = &t
	}
	return d
}
