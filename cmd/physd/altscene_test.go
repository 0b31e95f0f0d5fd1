//go:build !nocv

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/physd/physd/internal/altscene"
	"github.com/physd/physd/sim"
)

// judgeAlt fails the test when a certified estimate is outside the
// tolerance (a false certificate) or carries σ beyond the precision
// limits, and says whether it was certified.
func judgeAlt(t *testing.T, name string, rep estimateReport, g0, g1 float64) bool {
	t.Helper()
	// The project's false certificate: more than 2 % off in γ0, or in γ1
	// more than 0.02 at the pendulum's ω_n = 2, scaled by ω_n.
	off := math.Abs(rep.Gamma0-g0) > 0.02*g0 || math.Abs(rep.Gamma1-g1) > 0.01*math.Sqrt(g0)
	pr := rep.Diagnostics.Precision
	t.Logf("%s: %s (identified %v), γ0 %.4f ± %.4f, γ1 %.4f ± %.4f, σ(f_n) %.3g %%, σ(ζ) %.3g; %s",
		name, rep.Verdict, rep.Diagnostics.Identified, rep.Gamma0, rep.Sigma0, rep.Gamma1, rep.Sigma1, 100*pr.RelSigmaFn, pr.SigmaZeta, rep.Diagnostics.Readout)
	if !rep.Certified {
		return false
	}
	if off {
		t.Errorf("%s: false certificate: γ0 %.4f (truth %g), γ1 %.4f (truth %g)", name, rep.Gamma0, g0, rep.Gamma1, g1)
	}
	if !pr.Holds || !(pr.RelSigmaFn <= pr.LimitFn) || !(pr.SigmaZeta <= pr.LimitZeta) || !rep.Diagnostics.Identified {
		t.Errorf("%s: certified beyond the precision limits or unidentified: %+v", name, pr)
	}
	return true
}

func runEstimate(t *testing.T, paths []string) estimateReport {
	t.Helper()
	code, out, errs := physd(t, append([]string{"estimate", "--json"}, paths...)...)
	if code != exitOK && code != exitNotCertified {
		t.Fatalf("physd estimate %v: exit %d\n%s", paths, code, errs)
	}
	var rep estimateReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("JSON: %v\n%s", err, out)
	}
	if want := map[bool]int{true: exitOK, false: exitNotCertified}[rep.Certified]; code != want {
		t.Errorf("exit %d with certified=%v", code, rep.Certified)
	}
	return rep
}

// A door seen from above — a bar turning over a textured floor, another
// renderer than sim's — released three times at different speeds: the
// paper's three-trajectory overdamped case. Over seeds, textures and
// speeds every set is certified within 2 % of γ0 (and γ1 within
// 0.01·ω_n), or refused; never certified outside that.
func TestAltSceneDoor(t *testing.T) {
	if testing.Short() {
		t.Skip("renders, encodes and fits six three-clip sets")
	}
	const g1, g0, fps = 4.0, 2.25, 25.0
	sets := []struct {
		seed   uint64
		cell   float64
		z0     float64
		speeds [3]float64
	}{
		{1, 10, 20, [3]float64{-80, 0, 80}},
		{2, 6, 60, [3]float64{-80, 0, 80}},
		{3, 14, 40, [3]float64{-150, 0, 150}},
		{4, 10, 30, [3]float64{-40, 40, 120}},
		{5, 8, 60, [3]float64{0, 60, 120}},
		{6, 12, 45, [3]float64{-120, -60, 60}},
	}
	certified := 0
	for _, s := range sets {
		name := fmt.Sprintf("seed %d, texture cell %g px, z0 %g°, speeds %v °/s", s.seed, s.cell, s.z0, s.speeds)
		d := altscene.Door{Size: 80, Texture: altscene.Texture{Seed: s.seed, Cell: s.cell, Lo: 0.35, Hi: 0.9}, Length: 0.6, Width: 0.08, Ink: 0.08}
		dir := t.TempDir()
		var paths []string
		for m, v0 := range s.speeds {
			z, err := altscene.Motion{Gamma1: g1, Gamma0: g0, Z0: s.z0, V0: v0, FPS: fps, Seconds: 3}.States()
			if err != nil {
				t.Fatal(err)
			}
			frames, err := d.Render(z)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, fmt.Sprintf("door%d.mp4", m))
			if err := sim.WriteMP4(context.Background(), path, frames, fps); err != nil {
				t.Fatal(err)
			}
			paths = append(paths, path)
		}
		if judgeAlt(t, name, runEstimate(t, paths), g0, g1) {
			certified++
		}
	}
	t.Logf("doors: %d of %d sets certified, every one within tolerance", certified, len(sets))
}

// The paper's canonical pendulum cell (z0 = 50°, 1.5π s, 64×64, 20 fps)
// and its neighbours, drawn by another renderer: on a plain background it
// is certified within the paper's accuracy bar (γ0 within 0.5 %, γ1
// within 0.004); over a textured background it may be refused, never
// certified outside tolerance.
func TestAltScenePendulum(t *testing.T) {
	if testing.Short() {
		t.Skip("renders, encodes and fits eight clips")
	}
	const g1, g0, fps = 0.08, 4.0016, 20.0
	cases := []struct {
		z0, periods, bob, rod float64
		texture               uint64 // 0: a plain background
		mustCertify           bool
	}{
		{50, 1.5, 0.08, 1.5, 0, true},
		{50, 1.5, 0.12, 3, 0, true},
		{60, 1.5, 0.08, 1.5, 0, true},
		{70, 2.5, 0.12, 3, 0, true},
		{50, 2.5, 0.12, 3, 1, false},
		{60, 1.5, 0.12, 3, 2, false},
		{70, 2.5, 0.08, 1.5, 3, false},
		{50, 2.5, 0.08, 1.5, 0, false},
	}
	for _, c := range cases {
		name := fmt.Sprintf("z0 %g°, %gπ s, bob %g, rod %g px, texture %d", c.z0, c.periods, c.bob, c.rod, c.texture)
		p := altscene.Pendulum{Size: 64, Length: 0.55, Bob: c.bob, RodWidth: c.rod, Background: 0.85, Ink: 0.15}
		if c.texture != 0 {
			p.Texture = altscene.Texture{Seed: c.texture, Cell: 9, Lo: 0.5, Hi: 0.95}
		}
		z, err := altscene.Motion{Gamma1: g1, Gamma0: g0, Z0: c.z0, FPS: fps, Seconds: c.periods * math.Pi}.States()
		if err != nil {
			t.Fatal(err)
		}
		frames, err := p.Render(z)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "pendulum.mp4")
		if err := sim.WriteMP4(context.Background(), path, frames, fps); err != nil {
			t.Fatal(err)
		}
		rep := runEstimate(t, []string{path})
		ok := judgeAlt(t, name, rep, g0, g1)
		if c.mustCertify && !ok {
			t.Errorf("%s: %s, want certified: %v", name, rep.Verdict, rep.Reasons)
		}
		if ok && (math.Abs(rep.Gamma0-g0) > 0.005*g0 || math.Abs(rep.Gamma1-g1) > 0.004) {
			t.Errorf("%s: certified outside the paper's accuracy bar: γ0 %.4f, γ1 %.4f", name, rep.Gamma0, rep.Gamma1)
		}
	}
}
