package estimator

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/physd/physd/internal/par"
)

// On a real Fit of a sim clip the reported σ is the bootstrap's plus the
// jackknife's, both finite and positive, and the same on a second run —
// which runs every loop on one goroutine (par.WithWorkers) where the
// first used one per core.
func TestFitUncertaintyDeterministic(t *testing.T) {
	clips := []Clip{pendulumClip(t, 50, 1.5*math.Pi)}
	p, err := LookupPreset(DefaultPreset)
	if err != nil {
		t.Fatal(err)
	}
	var runs []*Result
	for _, ctx := range []context.Context{context.Background(), par.WithWorkers(context.Background(), 1)} {
		r, err := Fit(ctx, clips, Options{Preset: p, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, r)
	}
	r := runs[0]
	u := r.Uncertainty
	if u == nil || u.Source != "bootstrap+jackknife" || u.Bootstrap == nil || u.Jackknife == nil {
		t.Fatalf("uncertainty %+v", u)
	}
	jk, bs := u.Jackknife, u.Bootstrap
	t.Logf("γ1 %.5f ± %.5f, γ0 %.5f ± %.5f; bootstrap (%.5f, %.5f) block %d; jackknife (%.5f, %.5f) over %d groups, %d failed; stencil (%.4f, %.4f); %v",
		r.Gamma1, r.Sigma1, r.Gamma0, r.Sigma0, bs.Sigma1, bs.Sigma0, bs.Block, jk.Sigma1, jk.Sigma0, jk.Groups, jk.Failed,
		u.StencilSigma1, u.StencilSigma0, u.Elapsed)
	for _, v := range []float64{r.Sigma0, r.Sigma1, bs.Sigma0, bs.Sigma1, jk.Sigma0, jk.Sigma1} {
		if !(v > 0) || math.IsInf(v, 0) {
			t.Errorf("σ %g is not finite and positive", v)
		}
	}
	for a := range 2 {
		for b := range 2 {
			if want := bs.Cov[a][b] + jk.Cov[a][b]; math.Abs(r.Cov[a][b]-want) > 1e-12*math.Abs(want) {
				t.Errorf("Cov[%d][%d] = %g, want bootstrap + jackknife = %g", a, b, r.Cov[a][b], want)
			}
		}
	}
	if jk.Groups != jackknifeGroups || jk.Failed != 0 {
		t.Errorf("jackknife over %d groups (want %d), %d failed", jk.Groups, jackknifeGroups, jk.Failed)
	}
	if r.StencilCov == r.Cov {
		t.Error("StencilCov is the reported Cov")
	}
	s := runs[1].Uncertainty
	if *s.Jackknife != *jk || *s.Bootstrap != *bs || runs[1].Cov != r.Cov {
		t.Errorf("second run differs:\n%+v %+v\n%+v %+v", *jk, *bs, *s.Jackknife, *s.Bootstrap)
	}
	if runs[1].Gamma0 != r.Gamma0 || runs[1].Gamma1 != r.Gamma1 || !slices.Equal(runs[1].Latents[0], r.Latents[0]) {
		t.Errorf("one worker: γ (%v, %v), want (%v, %v), or the latent differs", runs[1].Gamma1, runs[1].Gamma0, r.Gamma1, r.Gamma0)
	}
}

// u and −u give the same γ: the jackknife aligns each replicate's
// readout to the encoder's, so flipping the encoder's sign (and with it
// the latent's) changes nothing.
func TestJackknifeSignInvariant(t *testing.T) {
	clips := []Clip{pendulumClip(t, 50, 1.5*math.Pi)}
	p, err := LookupPreset(DefaultPreset)
	if err != nil {
		t.Fatal(err)
	}
	p.Steps = 0
	r, err := Fit(context.Background(), clips, Options{Preset: p, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	lr := r.Encoder.(*LowRank)
	h, err := lr.Features(clips[0].Frames)
	if err != nil {
		t.Fatal(err)
	}
	lens := []int{len(clips[0].Frames)}
	a, err := jackknifeReadout(lr, h, lens, r.Dt, p, r.Stencil.Gamma1, r.Stencil.Gamma0)
	if err != nil {
		t.Fatal(err)
	}
	u := append([]float64(nil), data(lr.U)...)
	for i := range u {
		u[i] = -u[i]
	}
	flipped := lr.withReadout(u, -data(lr.B)[0])
	flipped.V = lr.V // no hidden layer output at Steps 0 (V = 0)
	b, err := jackknifeReadout(flipped, h, lens, r.Dt, p, r.Stencil.Gamma1, r.Stencil.Gamma0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		for j := range 2 {
			if d := math.Abs(a.Cov[i][j] - b.Cov[i][j]); d > 1e-9*math.Abs(a.Cov[i][j]) {
				t.Errorf("Cov[%d][%d]: %g with u, %g with −u", i, j, a.Cov[i][j], b.Cov[i][j])
			}
		}
	}
}
