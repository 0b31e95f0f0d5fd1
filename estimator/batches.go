package estimator

import (
	"errors"
	"fmt"
	"math"
)

// BatchSigma is the part of the reported uncertainty of a readout with
// no closed form, seen as one long free response, that fits of its
// successive parts measure (batchMeans).
type BatchSigma struct {
	Sigma1 float64       `json:"gamma1_sigma"`
	Sigma0 float64       `json:"gamma0_sigma"`
	Cov    [2][2]float64 `json:"cov"`
	// Gamma holds each part's (γ1, γ0), earliest first, and Sigma their
	// own σ (the output-error fit's sandwich).
	Gamma [][2]float64 `json:"gamma"`
	Sigma [][2]float64 `json:"sigma"`
	// Q is Cochran's heterogeneity statistic of the parts, per
	// parameter: χ² with B − 1 degrees of freedom if they agree.
	Q [2]float64 `json:"q"`
}

// batchMinPeriods is the fewest damped periods a part must hold for its
// own fit to tell (γ1, γ0).
const batchMinPeriods = 2

// errNoBatches reports a fit too short, or not a single run, for
// batchMeans.
var errNoBatches = errors.New("not one run of at least two periods a part")

// batchMeans measures what the residual bootstrap cannot see in a long
// free response read without a closed-form readout (a small-motion
// reading, a followed object): a readout whose gain depends on the
// amplitude — a codec's quantiser leaving small motion behind, or
// reading it larger — makes the decay of the early swings and of the
// late ones differ, and a damping fitted through both is biased by an
// amount no resampling of the residual shows. The run is cut into B
// contiguous parts (three when each holds batchMinPeriods damped
// periods, else two; two when a third cannot be fitted), each part
// fitted on its own (stencil, exact map, output-error fit, its sandwich
// σ), and the parts' spread beyond their own noise, τ² per parameter
// (DerSimonian & Laird 1986, the between-study variance of a
// meta-analysis), is added to the estimate's variance: the structure's
// damping is not told more closely than the amplitudes it was seen at
// disagree. Parts that agree within their noise add nothing (Q ≤ B − 1);
// a late part deep in the noise weighs little.
//
// Measured on H.264 clips of sub-pixel decays (CRF 18–30), the flow
// readout's γ1 went from 0.364 ± 0.007 (early third) to 0.272 ± 0.030
// (last) on a block whose truth is 0.308, and the bootstrap's σ(γ1)
// alone was 0.004 for errors of 0.04–0.05 (9–12σ). A part that cannot be
// fitted makes the measurement fail (errNoBatches when the run is too
// short for two parts).
func batchMeans(r *Result, off Offset) (*BatchSigma, error) {
	if len(r.Latents) != 1 || r.Trajectory == nil {
		return nil, errNoBatches
	}
	wd2 := r.Gamma0 - r.Gamma1*r.Gamma1/4
	if !(wd2 > 0) {
		return nil, errNoBatches
	}
	z := r.Latents[0]
	period := 2 * math.Pi / math.Sqrt(wd2) / r.Dt
	var first error
	for B := 3; B >= 2; B-- {
		if float64(len(z)) < float64(B)*batchMinPeriods*period {
			continue
		}
		s, err := batches(z, B, r.Dt, off)
		if err == nil {
			return s, nil
		}
		if first == nil {
			first = err
		}
	}
	if first == nil {
		return nil, errNoBatches
	}
	return nil, first
}

// batches fits z's B contiguous parts on their own and returns the
// spread of their estimates as batchMeans defines it.
func batches(z []float64, B int, dt float64, off Offset) (*BatchSigma, error) {
	s := &BatchSigma{Gamma: make([][2]float64, B), Sigma: make([][2]float64, B)}
	for b := range B {
		part := z[b*len(z)/B : (b+1)*len(z)/B]
		tf, err := refit([][]float64{part}, nil, dt, off)
		if err != nil {
			return nil, fmt.Errorf("part %d of %d: %w", b+1, B, err)
		}
		s.Gamma[b] = [2]float64{tf.Gamma1, tf.Gamma0}
		s.Sigma[b] = [2]float64{math.Sqrt(tf.Cov[0][0]), math.Sqrt(tf.Cov[1][1])}
		if !(s.Sigma[b][0] > 0 && s.Sigma[b][1] > 0) {
			return nil, fmt.Errorf("part %d of %d: σ (%g, %g): %w", b+1, B, s.Sigma[b][0], s.Sigma[b][1], ErrDegenerate)
		}
	}
	// Per parameter, the parts' spread beyond their own noise: the
	// DerSimonian–Laird between-part variance, with w_b = 1/σ_b²,
	//
	//	θ̄ = Σ w_b θ_b / Σ w_b,  Q = Σ w_b (θ_b − θ̄)²,
	//	τ² = max(0, (Q − (B − 1)) / (Σ w_b − Σ w_b² / Σ w_b)).
	for a := range 2 {
		var sw, sw2, swt float64
		for b := range B {
			w := 1 / (s.Sigma[b][a] * s.Sigma[b][a])
			sw += w
			sw2 += w * w
			swt += w * s.Gamma[b][a]
		}
		mean := swt / sw
		var q float64
		for b := range B {
			d := s.Gamma[b][a] - mean
			q += d * d / (s.Sigma[b][a] * s.Sigma[b][a])
		}
		s.Q[a] = q
		s.Cov[a][a] = max(0, (q-float64(B-1))/(sw-sw2/sw))
	}
	s.Sigma1, s.Sigma0 = math.Sqrt(s.Cov[0][0]), math.Sqrt(s.Cov[1][1])
	return s, nil
}
