package estimator

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
	"gorgonia.org/tensor"

	"github.com/physd/physd/estimator/nn"
	"github.com/physd/physd/internal/par"
)

// JackknifeSigma is the readout-selection part of the reported
// uncertainty: the spread of the estimate over readouts re-solved with
// one block of one clip deleted (jackknifeReadout).
type JackknifeSigma struct {
	Sigma1 float64       `json:"gamma1_sigma"`
	Sigma0 float64       `json:"gamma0_sigma"`
	Cov    [2][2]float64 `json:"cov"`
	// Groups is the number of replicates, G per clip; Failed counts
	// replicates with no estimate, each counted as the largest deviation
	// of those that had one (see replicateSpread).
	Groups int `json:"groups"`
	Failed int `json:"failed,omitempty"`
}

// jackknifeGroups is G, the blocks each clip is cut into: a replicate
// loses a sixteenth of one clip, and a single clip's variance has G − 1
// = 15 degrees of freedom. With eighths, a block held a whole turning
// point of a 1.5-period clip, and its one replicate set σ(γ1) near 0.05
// on the stress test's jitter cells for estimates good to ±0.003 across
// seeds (one outlier of eight); sixteenths halved that.
const jackknifeGroups = 16

// jackknifeMinSegment is the fewest frames a clip's part before or after
// the deleted block must have to take part in the readout's problem:
// the stencil needs three and each part brings its own initial state.
const jackknifeMinSegment = 4

// jackknifeReadout measures how much choosing the readout u on these very
// frames moves the estimate, by a delete-a-group jackknife (Efron &
// Stein 1981; Shao & Tu 1995, §5.2). The features h = W(x − μ) are held
// fixed (e's W). Each clip m is cut into G contiguous blocks, and each of
// the N = G·M groups (m, g) — block g of clip m — is deleted in turn:
//
//	D_mg   = frames ⌊gT_m/G⌋ … ⌊(g+1)T_m/G⌋ − 1 of clip m
//	u_mg   = the closed-form readout (solveReadoutFrom, one start at the
//	         final stencil coefficients (sg1, sg0)) solved on every frame
//	         outside D_mg, clip m split into its parts before and after
//	         D_mg so that no stencil or trajectory spans the gap
//	z_mg   = e's forward pass with u replaced by u_mg, on every frame
//	         outside D_mg (clip m's parts either side of it runs of one
//	         free response, Runs)
//	θ_mg   = FitTrajectoryRuns(z_mg) started from Exact(FitODE(z_mg)), as Fit
//	Cov    = (N − 1)/N Σ (θ_mg − θ̄)(θ_mg − θ̄)ᵀ,  θ̄ the mean of the θ_mg.
//
// One clip at a time, not block g of every clip at once: the clips of a
// set often share their phase (the paper's three-clip sets start
// together), and deleting the same early frames of all of them removes
// what pins the readout — on the critical pendulum sets that moved γ1
// from 4.0 to 5.3 in one replicate and made σ1 ≈ 1.1 for an estimate
// good to 0.002. A single clip is the case M = 1.
//
// The replicate is the whole estimate had D_mg never been recorded: its
// readout is not applied to the deleted frames either. Applied there it
// extrapolates to states it was not chosen on — a block holding a
// swing's extreme leaves them to it — and that moved γ1 by far more
// than the data do (the stress test's background L3 seed 7: one
// replicate 0.153 against seven at 0.080–0.082). The replicates then
// carry the noise of the fit as well, which the bootstrap also counts:
// the sum is conservative by up to √2 in σ.
//
// u and −u (and any multiple) give the same γ, so u_mg is aligned to e's
// readout u before use: sign and scale such that u_mgᵀΣu > 0 and
// u_mgᵀΣu_mg = uᵀΣu, Σ the features' covariance over every frame; the
// intercept keeps the latent's mean. The hidden layer is e's, unchanged.
//
// A replicate fails when its readout, its stencil, the exact map or the
// trajectory fit fails, or its γ0 is not positive. A failed replicate
// adds the largest deviation of the successful ones (a readout that
// cannot be re-solved without some frames is fragile, which must not
// make σ smaller; see replicateSpread); with fewer than two successes it
// returns an error.
func jackknifeReadout(e *LowRank, h []float64, lens []int, dt float64, p Preset, sg1, sg0 float64) (*JackknifeSigma, error) {
	k := e.K
	n := 0
	for _, l := range lens {
		n += l
	}
	if len(h) != n*k {
		return nil, fmt.Errorf("jackknife: %d features for %d frames of %d", len(h), n, k)
	}
	full := make([][]float64, len(lens))
	start := 0
	for m, l := range lens {
		full[m] = h[start*k : (start+l)*k]
		start += l
	}
	sigma := featureCovariance(full, k)
	u := append([]float64(nil), data(e.U)...)
	uSu := quadForm(sigma, u, u)
	G := jackknifeGroups
	// Replicate (m, g) deletes block g of clip m.
	type group struct{ clip, lo, hi int }
	var groups []group
	for m, l := range lens {
		for g := range G {
			groups = append(groups, group{m, g * l / G, (g + 1) * l / G})
		}
	}
	reps := make([][2]float64, len(groups))
	ok := make([]bool, len(groups))
	par.For(e.workers, len(groups), func(g int) {
		var feats [][]float64
		start := 0
		for m, l := range lens {
			segs := [][2]int{{0, l}}
			if m == groups[g].clip {
				segs = [][2]int{{0, groups[g].lo}, {groups[g].hi, l}}
			}
			for _, seg := range segs {
				if seg[1]-seg[0] >= jackknifeMinSegment {
					feats = append(feats, h[(start+seg[0])*k:(start+seg[1])*k])
				}
			}
			start += l
		}
		ug, err := solveReadoutFrom(feats, k, dt, p.Loss.Tau, p.Loss.Offset, sg1, sg0)
		if err != nil {
			return
		}
		// Align sign and scale to u, and keep the latent's mean.
		c := quadForm(sigma, ug, u)
		s := quadForm(sigma, ug, ug)
		if !(s > 0) || c == 0 {
			return
		}
		a := math.Copysign(math.Sqrt(uSu/s), c)
		var shift float64
		for j := range ug {
			ug[j] *= a
		}
		for i := range n {
			for j := range k {
				shift += (u[j] - ug[j]) * h[i*k+j]
			}
		}
		rep := e.withReadout(ug, data(e.B)[0]+shift/float64(n))
		z, _ := rep.head(h, n)
		// The replicate's latent where its readout was chosen: the
		// deleted block's frames are left out of its fit too, the parts
		// of clip m either side of it runs of one free response.
		var lat [][]float64
		var runs Runs
		start = 0
		for m, l := range lens {
			segs := [][2]int{{0, l}}
			if m == groups[g].clip {
				segs = [][2]int{{0, groups[g].lo}, {groups[g].hi, l}}
			}
			for _, seg := range segs {
				if seg[1]-seg[0] >= jackknifeMinSegment {
					lat = append(lat, z[start+seg[0]:start+seg[1]])
					runs.Clip, runs.First = append(runs.Clip, m), append(runs.First, seg[0])
				}
			}
			start += l
		}
		tf, err := refit(lat, &runs, dt, p.Loss.Offset)
		if err != nil {
			return
		}
		reps[g], ok[g] = [2]float64{tf.Gamma1, tf.Gamma0}, true
	})
	return jackknifeSigma(reps, ok)
}

// jackknifeSigma is the JackknifeSigma of the replicates reps (those ok
// had an estimate): jackknifeCov and its square roots.
func jackknifeSigma(reps [][2]float64, ok []bool) (*JackknifeSigma, error) {
	cov, failed, err := jackknifeCov(reps, ok)
	if err != nil {
		return nil, fmt.Errorf("jackknife: %w", err)
	}
	return &JackknifeSigma{Sigma1: math.Sqrt(cov[0][0]), Sigma0: math.Sqrt(cov[1][1]), Cov: cov, Groups: len(reps), Failed: failed}, nil
}

// refit is a replicate's estimate from latents zs placed by runs (nil:
// each its own clip): the stencil, its exact map, and the output-error
// fit started there, with a positive, finite γ0.
func refit(zs [][]float64, runs *Runs, dt float64, off Offset) (*TrajectoryFit, error) {
	f, err := fitODECoef(zs, dt, off)
	if err != nil {
		return nil, err
	}
	g1, g0, err := Exact(f.Gamma1, f.Gamma0, dt)
	if err != nil {
		return nil, err
	}
	tf, err := FitTrajectoryRuns(zs, runs, dt, g1, g0, off)
	if err != nil {
		return nil, err
	}
	if !(tf.Gamma0 > 0) || !finite2([2]float64{tf.Gamma1, tf.Gamma0}) {
		return nil, fmt.Errorf("refit: γ0 %g: %w", tf.Gamma0, ErrDegenerate)
	}
	return tf, nil
}

// jackknifeCov is (G − 1)/G (S + n_failed·F) over the G replicates (see
// replicateSpread): Σ_g (θ_g − θ̄)(θ_g − θ̄)ᵀ over the successes, a failed
// replicate adding the largest successful deviation. It is an error when
// fewer than two replicates succeeded.
func jackknifeCov(reps [][2]float64, ok []bool) ([2][2]float64, int, error) {
	S, F, good, failed := replicateSpread(reps, ok)
	if good < 2 {
		return [2][2]float64{}, failed, fmt.Errorf("%d of %d replicates failed: %w", failed, len(reps), ErrDegenerate)
	}
	g := float64(len(reps))
	var c [2][2]float64
	for a := range 2 {
		for b := range 2 {
			c[a][b] = (g - 1) / g * (S[a][b] + float64(failed)*F[a][b])
		}
	}
	return c, failed, nil
}

// quadForm is aᵀSb.
func quadForm(S *mat.SymDense, a, b []float64) float64 {
	return mat.Inner(mat.NewVecDense(len(a), a), S, mat.NewVecDense(len(b), b))
}

// withReadout is a shallow copy of e whose linear readout is u and
// intercept b; every other layer is e's (shared, not copied).
func (e *LowRank) withReadout(u []float64, b float64) *LowRank {
	c := *e
	c.cache = nil // the copy only runs its head; a shared cache is not goroutine-safe
	c.U = &nn.Param{Name: e.U.Name, Value: tensor.New(tensor.WithShape(len(u)), tensor.WithBacking(u))}
	c.B = &nn.Param{Name: e.B.Name, Value: tensor.New(tensor.WithShape(1), tensor.WithBacking([]float64{b}))}
	return &c
}
