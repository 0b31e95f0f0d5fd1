package estimator

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/physd/physd/internal/par"
)

// BootstrapSigma is the noise part of the reported uncertainty: the
// spread of the output-error estimate over moving-block resamples of its
// own residual (bootstrapTrajectory).
type BootstrapSigma struct {
	Sigma1 float64       `json:"gamma1_sigma"`
	Sigma0 float64       `json:"gamma0_sigma"`
	Cov    [2][2]float64 `json:"cov"`
	// Block is the block length, in samples, the resamples were drawn
	// with (the longest any clip used; see bootstrapBlock).
	Block int `json:"block_length"`
	// Resamples is B; Failed counts resamples whose refit failed, each
	// counted as the largest deviation of those that did (see
	// replicateSpread).
	Resamples int `json:"resamples"`
	Failed    int `json:"failed,omitempty"`
	// Shrinkage is f for (γ1, γ0): how much of the noise the estimate is
	// sensitive to the fit itself absorbs, measured on the resamples; the
	// variances were multiplied by it.
	Shrinkage [2]float64 `json:"residual_shrinkage"`
}

// bootstrapResamples is B, the resamples of one bootstrap: enough that
// σ is known to ±5 % (a variance from B draws has relative sd √(2/B)).
const bootstrapResamples = 200

// bootstrapTrajectory measures how much the noise in the latent moves the
// output-error estimate, colour included, by a moving-block bootstrap
// (Künsch 1989) of the fit's residual:
//
//	e_m  = z_m − ẑ_m                       per clip m (tf.Resid, tf.Fitted)
//	e*_m = blocks of e_m of length b, drawn with replacement from
//	       the T_m − b + 1 that fit inside clip m, laid end to end, cut to T_m
//	z*_m = ẑ_m + e*_m
//	θ*   = argmin_θ min_{x,c} Σ (z* − ẑ(θ, x, c))²   (trajectoryLM from θ̂)
//	C    = Σ_s (θ*_s − θ̄*)(θ*_s − θ̄*)ᵀ / (B − 1)      over the B resamples
//	Cov_jk = C_jk √(f_j f_k).
//
// Blocks never straddle two clips, which are independent. A block keeps
// whatever serial dependence the residual has within b samples — pixel
// noise filtered by the encoder, quantisation error smooth in the state,
// misfit at the oscillation frequency — which a white-noise σ (or i.i.d.
// resampling) would lose. b is chosen by bootstrapBlock.
//
// f corrects the one thing resampling the residual cannot see: the noise
// the fit absorbed. The residual is the noise minus its projection on the
// model's tangent space (initial states, offsets, γ), and that space is
// where γ̂ is sensitive — each clip's free response oscillates at the
// frequency the estimate reads, and at the optimum the residual's score
// Σ_i J_i e_i is exactly zero. With white noise the loss is the familiar
// p/N, but coloured noise puts more power near that frequency and the
// fit takes a larger share (on an AR(1) latent with ρ = 0.9, some 40 % of
// the variance of γ̂0's score). The resamples measure it: each injects a
// known noise e*, whose own fit leaves r* = z* − ẑ(θ*), and
//
//	f_j = Σ_s V_j(e*_s) / Σ_s V_j(r*_s),
//	V_j(e) = Σ_{|k|<b} (1 − |k|/b) Σ_i J_ij e_i J_{i+k,j} e_{i+k}
//
// is the Bartlett-weighted long-run variance of coefficient j's score
// (lags within clips, J the profiled Jacobian at θ̂) — the quantity a
// block bootstrap's variance rests on. e is to the true noise what r* is
// to e*, so the resampled variance is short by f. (The usual √(N/(N−p))
// inflation of residuals, Davison & Hinkley 1997 §6.2, is the white-noise
// case of f; f replaces it.)
//
// The random stream is seeded by a hash of the residual, so the same
// latents always give the same σ; the replicates are refitted on up to
// workers goroutines (par.For), each written to its own slot, so
// scheduling does not matter.
func bootstrapTrajectory(tf *TrajectoryFit, dt float64, off Offset, B, workers int) (*BootstrapSigma, error) {
	resid := tf.Resid
	lens := make([]int, len(resid))
	var n int
	for m, e := range resid {
		if len(tf.Fitted[m]) != len(e) {
			return nil, fmt.Errorf("bootstrap: clip %d has %d fitted samples for %d residuals", m, len(tf.Fitted[m]), len(e))
		}
		lens[m] = len(e)
		n += len(e)
	}
	lay := tf.layout()
	p := 2 + lay.q(off)
	if n <= p || B < 2 {
		return nil, fmt.Errorf("bootstrap: %d samples for %d parameters, %d resamples: %w", n, p, B, ErrDegenerate)
	}
	theta := [2]float64{tf.Gamma1, tf.Gamma0}
	b, jac, err := bootstrapBlock(tf, dt, off)
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(residualSeed(resid), 0x626f6f74))
	// Every resample's block starts are drawn here, in order.
	starts := make([][][]int, B)
	used := 0
	for s := range starts {
		starts[s] = make([][]int, len(lens))
		for m, t := range lens {
			bm := clipBlock(b, t)
			used = max(used, bm)
			k := (t + bm - 1) / bm
			starts[s][m] = make([]int, k)
			for i := range k {
				starts[s][m][i] = rng.IntN(t - bm + 1)
			}
		}
	}
	reps := make([][2]float64, B)
	ok := make([]bool, B)
	vIn := make([][2]float64, B)  // V(e*_s)
	vOut := make([][2]float64, B) // V(r*_s)
	par.For(workers, B, func(s int) {
		z := make([]float64, 0, n)
		noise := make([]float64, 0, n)
		for m, t := range lens {
			e, fit := resid[m], tf.Fitted[m]
			bm := clipBlock(b, t)
			for i := range t {
				// sample i of clip m is sample i%bm of block i/bm
				v := e[starts[s][m][i/bm]+i%bm]
				z = append(z, fit[i]+v)
				noise = append(noise, v)
			}
		}
		// The refits sum fast (projector.fast): they do not seed anything.
		x, err := trajectoryLM(z, lay, dt, theta, off, true)
		if err != nil || !finite2(x) {
			return
		}
		r := make([]float64, n)
		pr := newProjector(lay, dt, off)
		pr.fast = true
		if pr.residual(z, x[0], x[1], r) != nil {
			return
		}
		reps[s], ok[s] = x, true
		vIn[s], vOut[s] = scoreLRV(jac, noise, lens, b), scoreLRV(jac, r, lens, b)
	})
	cov, failed, err := bootstrapCov(reps, ok)
	if err != nil {
		return nil, fmt.Errorf("bootstrap: %w", err)
	}
	var in, out [2]float64
	for s := range B {
		for j := range 2 {
			in[j] += vIn[s][j]
			out[j] += vOut[s][j]
		}
	}
	f := [2]float64{1, 1}
	for j := range 2 {
		if out[j] > 0 && in[j] > 0 {
			f[j] = in[j] / out[j]
		}
	}
	for a := range 2 {
		for c := range 2 {
			cov[a][c] *= math.Sqrt(f[a] * f[c])
		}
	}
	return &BootstrapSigma{Sigma1: math.Sqrt(cov[0][0]), Sigma0: math.Sqrt(cov[1][1]), Cov: cov,
		Block: used, Resamples: B, Failed: failed, Shrinkage: f}, nil
}

// scoreLRV is V_j(e) of bootstrapTrajectory for j = γ1, γ0: the
// Bartlett-weighted long-run variance of the score s_i = J_ij e_i over
// lags |k| < b, within each clip (lens). jac is the profiled Jacobian,
// n×2. The Bartlett kernel is a box's autocorrelation, so the sum over
// lags is one over windows: with S_t the sum of s over the b samples
// from t (those inside the clip),
//
//	Σ_{|k|<b} (1 − |k|/b) Σ_i s_i s_{i+k} = (1/b) Σ_{t=1−b}^{l−1} S_t²,
//
// and every S_t is a difference of two prefix sums: O(l), not O(l·b).
func scoreLRV(jac [][2]float64, e []float64, lens []int, b int) [2]float64 {
	var v [2]float64
	start := 0
	var prefix []float64
	for _, l := range lens {
		bm := clipBlock(b, l)
		prefix = slices.Grow(prefix[:0], l+1)[:l+1]
		for j := range 2 {
			prefix[0] = 0
			for i := range l {
				prefix[i+1] = prefix[i] + jac[start+i][j]*e[start+i]
			}
			var ss float64
			for t := 1 - bm; t < l; t++ {
				st := prefix[min(l, t+bm)] - prefix[max(0, t)]
				ss += st * st
			}
			v[j] += ss / float64(bm)
		}
		start += l
	}
	return v
}

// clipBlock is the block length used in a clip of t samples: b, but at
// most a third of the clip, so that a resample can differ from the clip.
func clipBlock(b, t int) int { return max(1, min(b, t/3)) }

// bootstrapBlock chooses the block length b from the residual's serial
// dependence, by Politis & White's (2004) rule for the circular/moving
// block bootstrap (as corrected by Patton, Politis & White 2009), and
// returns it with the profiled Jacobian J (n×2) at θ̂:
//
//	b = (2 Ĝ² / D̂)^{1/3} N^{1/3},  D̂ = (4/3) ĝ(0)²,
//	ĝ(0) = Σ_{|k|≤M} λ(k/M) R̂(k),  Ĝ = Σ_{|k|≤M} λ(k/M) |k| R̂(k),
//
// with λ the flat-top kernel (1 on |t| ≤ ½, 2(1 − |t|) to |t| = 1) and
// M = 2m̂, m̂ the first lag after which K_N = max(5, ⌈√log₁₀N⌉) sample
// autocorrelations in a row stay below 2√(log₁₀N / N). b is at most
// min(3√N, N/3).
//
// The rule is stated for a sample mean, and γ̂ is not one: to first order
// γ̂ − γ = (JᵀJ)⁻¹ Σ_i J_i e_i, with J_i the derivative of the profiled
// (variable-projection) residual at sample i. So the series the rule is
// applied to is the score s_ij = J_ij e_i of each coefficient j, and b is
// the larger of the two. This matters on video: the residual may hold
// misfit at the oscillation frequency, which has almost no power at zero
// frequency (a rule on e itself would call it white) but multiplied by J,
// which oscillates at that frequency too, becomes a slow drift in the
// score — exactly the dependence the blocks must keep. Autocovariances
// are pooled over clips, lags never crossing a clip boundary.
func bootstrapBlock(tf *TrajectoryFit, dt float64, off Offset) (int, [][2]float64, error) {
	lens := make([]int, len(tf.Resid))
	var e []float64
	for m, r := range tf.Resid {
		lens[m] = len(r)
		e = append(e, r...)
	}
	jac, err := profiledJacobian(tf, dt, off)
	if err != nil {
		return 0, nil, fmt.Errorf("bootstrap: %w", err)
	}
	var score [2][]float64
	for j := range 2 {
		score[j] = make([]float64, len(e))
		for i, v := range e {
			score[j][i] = jac[i][j] * v
		}
	}
	b := 1
	for _, s := range score {
		b = max(b, politisWhite(s, lens))
	}
	return b, jac, nil
}

// profiledJacobian is J_ij = ∂r_i/∂γ_j at the fit's (γ1, γ0), r the
// profiled (variable-projection) residual of the stacked latents, by
// central differences as trajectoryLM takes it.
func profiledJacobian(tf *TrajectoryFit, dt float64, off Offset) ([][2]float64, error) {
	lens := make([]int, len(tf.Resid))
	var z []float64
	for m, r := range tf.Resid {
		lens[m] = len(r)
		for i, v := range r {
			z = append(z, tf.Fitted[m][i]+v)
		}
	}
	pr := newProjector(tf.layout(), dt, off)
	rp, rm := make([]float64, len(z)), make([]float64, len(z))
	jac := make([][2]float64, len(z))
	x := [2]float64{tf.Gamma1, tf.Gamma0}
	for j := range 2 {
		h := 1e-6 * math.Max(1, math.Abs(x[j]))
		xp, xm := x, x
		xp[j] += h
		xm[j] -= h
		if pr.residual(z, xp[0], xp[1], rp) != nil || pr.residual(z, xm[0], xm[1], rm) != nil {
			return nil, fmt.Errorf("profiled Jacobian at (%g, %g): %w", x[0], x[1], ErrDegenerate)
		}
		for i := range z {
			jac[i][j] = (rp[i] - rm[i]) / (2 * h)
		}
	}
	return jac, nil
}

// politisWhite is the Politis–White block length of the series s, made
// of independent segments of lengths lens (see bootstrapBlock).
func politisWhite(s []float64, lens []int) int {
	n := len(s)
	if n < 8 {
		return 1
	}
	longest := 0
	for _, l := range lens {
		longest = max(longest, l)
	}
	bMax := int(math.Ceil(math.Min(3*math.Sqrt(float64(n)), float64(n)/3)))
	kn := max(5, int(math.Ceil(math.Sqrt(math.Log10(float64(n))))))
	maxLag := min(longest-1, bMax+kn)
	if maxLag < 1 {
		return 1
	}
	// Autocovariance R̂(k), pooled over segments, each centred on its mean.
	cent := make([]float64, n)
	start := 0
	for _, l := range lens {
		var mean float64
		for _, v := range s[start : start+l] {
			mean += v / float64(l)
		}
		for i := range l {
			cent[start+i] = s[start+i] - mean
		}
		start += l
	}
	R := make([]float64, maxLag+1)
	for k := range R {
		start := 0
		for _, l := range lens {
			seg := cent[start : start+l]
			for i := 0; i+k < l; i++ {
				R[k] += seg[i] * seg[i+k]
			}
			start += l
		}
		R[k] /= float64(n)
	}
	if !(R[0] > 0) {
		return 1
	}
	// m̂: first lag followed by K_N insignificant autocorrelations.
	crit := 2 * math.Sqrt(math.Log10(float64(n))/float64(n))
	mHat := -1
	for m := 0; m+kn <= maxLag; m++ {
		quiet := true
		for k := 1; k <= kn; k++ {
			if math.Abs(R[m+k]/R[0]) >= crit {
				quiet = false
				break
			}
		}
		if quiet {
			mHat = m
			break
		}
	}
	if mHat < 0 { // dependence beyond every lag we can see
		return max(1, min(bMax, longest/3))
	}
	M := min(2*mHat, maxLag)
	g0, G := R[0], 0.0
	for k := 1; k <= M; k++ {
		w := flatTop(float64(k) / float64(M))
		g0 += 2 * w * R[k]
		G += 2 * w * float64(k) * R[k]
	}
	if !(g0 > 0) {
		// The kernel estimate of the long-run variance is not positive
		// (it can be: the flat-top kernel is not positive definite), so
		// the rule has nothing to balance: keep the dependence we saw.
		return max(1, min(bMax, 2*max(mHat, 1)))
	}
	D := 4.0 / 3 * g0 * g0
	b := math.Cbrt(2*G*G/D) * math.Cbrt(float64(n))
	return max(1, min(bMax, int(math.Ceil(b))))
}

// flatTop is Politis & Romano's trapezoidal kernel.
func flatTop(t float64) float64 {
	t = math.Abs(t)
	switch {
	case t <= 0.5:
		return 1
	case t <= 1:
		return 2 * (1 - t)
	}
	return 0
}

// residualSeed hashes the residual's bits: the bootstrap's random stream
// is a function of the data alone.
func residualSeed(res [][]float64) uint64 {
	h := fnv.New64a()
	var buf [8]byte
	for _, r := range res {
		for _, v := range r {
			binary.LittleEndian.PutUint64(buf[:], math.Float64bits(v))
			h.Write(buf[:])
		}
	}
	return h.Sum64()
}

// replicateSpread sums the outer products of the successful replicates'
// deviations from their mean, S = Σ_ok (θ − θ̄)(θ − θ̄)ᵀ, and returns it
// with the largest one F = d dᵀ (largest in the metric of S's diagonal),
// the number of successes and of failures. A replicate with no estimate
// is evidence that the estimate is fragile, so a caller counts each
// failure as F on top of S: never as nothing, which would shrink a
// jackknife's sum, and never by dropping to a smaller sample.
func replicateSpread(reps [][2]float64, ok []bool) (S, F [2][2]float64, good, failed int) {
	var mean [2]float64
	for i, r := range reps {
		if ok[i] {
			mean[0] += r[0]
			mean[1] += r[1]
			good++
		}
	}
	failed = len(reps) - good
	if good == 0 {
		return S, F, 0, failed
	}
	mean[0] /= float64(good)
	mean[1] /= float64(good)
	var devs [][2]float64
	for i, r := range reps {
		if ok[i] {
			d := [2]float64{r[0] - mean[0], r[1] - mean[1]}
			devs = append(devs, d)
			for a := range 2 {
				for b := range 2 {
					S[a][b] += d[a] * d[b]
				}
			}
		}
	}
	worst := -1.0
	for _, d := range devs {
		var m float64
		for a := range 2 {
			if S[a][a] > 0 {
				m += d[a] * d[a] / S[a][a]
			}
		}
		if m > worst {
			worst = m
			for a := range 2 {
				for b := range 2 {
					F[a][b] = d[a] * d[b]
				}
			}
		}
	}
	return S, F, good, failed
}

// bootstrapCov is the bootstrap's covariance (S + n_failed·F)/(n_ok − 1)
// (see replicateSpread): the successes' sample covariance, plus the
// largest deviation once per failure. It is an error when fewer than two
// replicates succeeded.
func bootstrapCov(reps [][2]float64, ok []bool) ([2][2]float64, int, error) {
	S, F, good, failed := replicateSpread(reps, ok)
	if good < 2 {
		return [2][2]float64{}, failed, fmt.Errorf("%d of %d replicates failed: %w", failed, len(reps), ErrDegenerate)
	}
	var c [2][2]float64
	for a := range 2 {
		for b := range 2 {
			c[a][b] = (S[a][b] + float64(failed)*F[a][b]) / float64(good-1)
		}
	}
	return c, failed, nil
}

func finite2(x [2]float64) bool {
	return !math.IsNaN(x[0]) && !math.IsInf(x[0], 0) && !math.IsNaN(x[1]) && !math.IsInf(x[1], 0)
}
