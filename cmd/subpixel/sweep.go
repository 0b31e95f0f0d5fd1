package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"path/filepath"

	"github.com/physd/physd/internal/sweepcmd"
	"github.com/physd/physd/sim"
)

// cell is one row of the sweep: an amplitude and an encoding.
type cell struct {
	group  string // "sub-pixel", "compression", or a kind: "cable", "beam", "mast", "block h265"
	ampPx  float64
	crf    int
	gop    int // 0: the encoder's default (x264: 250)
	target bool
	object sim.ObjectKind // "": a block
	codec  sim.Codec      // "": H.264
}

// cells are the sweep: amplitudes 2 … 0.1 px at CRF 18 and 30
// (certified down to 0.3 px at CRF 18 and 1 px at CRF 30 is the target),
// and 5 and 12 px at CRF 38 with keyframes every 30 and 250 frames; and
// the other kinds — a cable, a beam's edge, a mast, a block over H.265 —
// at 1 and 0.5 px, CRF 18.
func cells() []cell {
	var cs []cell
	for _, crf := range []int{18, 30} {
		for _, a := range []float64{2, 1, 0.5, 0.3, 0.1} {
			floor := 0.3
			if crf == 30 {
				floor = 1
			}
			cs = append(cs, cell{group: "sub-pixel", ampPx: a, crf: crf, target: a >= floor})
		}
	}
	for _, a := range []float64{5, 12} {
		for _, gop := range []int{30, 250} {
			cs = append(cs, cell{group: "compression", ampPx: a, crf: 38, gop: gop, target: true})
		}
	}
	// The kinds the held-back scenes hold, with no target of
	// their own: what they show is counted, false certificates first.
	for _, k := range []struct {
		group  string
		object sim.ObjectKind
		codec  sim.Codec
	}{
		{"cable", sim.ObjectCable, ""}, {"beam", sim.ObjectBeam, ""}, {"mast", sim.ObjectMast, ""}, {"block h265", sim.ObjectBlock, sim.CodecH265},
	} {
		for _, a := range []float64{1, 0.5} {
			cs = append(cs, cell{group: k.group, ampPx: a, crf: 18, object: k.object, codec: k.codec})
		}
	}
	return cs
}

// outcome is one estimate of a cell.
type outcome struct {
	seed           int
	fn, zeta       float64
	g0, g1         float64 // truth
	est            estimate
	err            string
	inBar, falseOK bool
}

// estimate is the part of `physd estimate --json` the report reads.
type estimate struct {
	Gamma0    float64  `json:"gamma0"`
	Gamma1    float64  `json:"gamma1"`
	Sigma0    float64  `json:"gamma0_sigma"`
	Sigma1    float64  `json:"gamma1_sigma"`
	Verdict   string   `json:"verdict"`
	Certified bool     `json:"certified"`
	Reasons   []string `json:"reasons"`
	Amplitude *struct {
		Px      float64 `json:"px"`
		NoisePx float64 `json:"noise_px"`
	} `json:"amplitude"`
	// Modes are the modes the estimate separated (issue 46): a clip here
	// is one mode, and any other certified is spurious.
	Modes *struct {
		Modes []struct {
			Gamma0    float64 `json:"gamma0"`
			Gamma1    float64 `json:"gamma1"`
			Certified bool    `json:"certified"`
		} `json:"modes"`
	} `json:"modes"`
	Diagnostics struct {
		Readout string `json:"readout"`
		Impulse struct {
			At float64 `json:"t"`
		} `json:"impulse"`
		Checks []struct {
			Name   string `json:"name"`
			Passed bool   `json:"passed"`
		} `json:"checks"`
	} `json:"diagnostics"`
}

// spurious counts the estimate's certified modes outside the bar of the
// clip's one mode (γ0 g0, γ1 g1), and how many modes it separated.
func (e *estimate) spurious(g0, g1 float64) (n, of int) {
	if e.Modes == nil {
		return 0, 0
	}
	for _, m := range e.Modes.Modes {
		if m.Certified && !(math.Abs(m.Gamma0-g0) <= 0.01*g0 && math.Abs(m.Gamma1-g1) <= 0.2*g1+0.02) {
			n++
		}
	}
	return n, len(e.Modes.Modes)
}

// failed reports whether the estimate failed check name.
func (e *estimate) failed(name string) bool {
	for _, c := range e.Diagnostics.Checks {
		if c.Name == name && !c.Passed {
			return true
		}
	}
	return false
}

// draw picks a seed's frequency and damping ratio from the seed alone.
func draw(group string, seed int) (fn, zeta float64) {
	rng := rand.New(rand.NewPCG(uint64(seed), uint64(len(group))))
	return 1 + 2*rng.Float64(), 0.005 + 0.015*rng.Float64()
}

// sweep runs every cell's seeds.
func sweep(ctx context.Context, cfg config, dir string, log io.Writer) (map[cell][]outcome, error) {
	dur := 20.0
	seeds := cfg.Seeds
	if cfg.Quick {
		dur, seeds = 8, 1
	}
	out := map[cell][]outcome{}
	for _, c := range cells() {
		for seed := 1; seed <= seeds; seed++ {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			fn, zeta := draw(c.group, seed)
			obj := c.object
			if obj == "" {
				obj = sim.ObjectBlock
			}
			s := sim.Structure{Duration: dur, Seed: int64(seed), Object: obj,
				Modes: []sim.Mode{{Fn: fn, Zeta: zeta, AmplitudePx: c.ampPx}}}
			frames, _, err := sim.RenderStructure(ctx, s)
			if err != nil {
				return nil, fmt.Errorf("render %v seed %d: %w", c, seed, err)
			}
			path := filepath.Join(dir, fmt.Sprintf("%s-a%g-crf%d-gop%d-%s-s%d.mp4", obj, c.ampPx, c.crf, c.gop, cmp.Or(c.codec, sim.CodecH264), seed))
			if err := sim.WriteVideo(ctx, path, frames, s.WithDefaults().FPS, sim.Encoding{Codec: c.codec, CRF: c.crf, GOP: c.gop}); err != nil {
				return nil, fmt.Errorf("encode %s: %w", path, err)
			}
			g1, g0 := s.Modes[0].Gammas()
			o := outcome{seed: seed, fn: fn, zeta: zeta, g0: g0, g1: g1}
			o.est, o.err = sweepcmd.Estimate[estimate](ctx, cfg, path)
			if o.err == "" && o.est.Certified {
				o.inBar = math.Abs(o.est.Gamma0-g0) <= 0.01*g0 && math.Abs(o.est.Gamma1-g1) <= 0.2*g1+0.02
				o.falseOK = !o.inBar
			}
			fmt.Fprintf(log, "subpixel: %s %g px crf %d gop %d seed %d (f %.3f Hz, ζ %.4f): %s γ0 %.4g (%.4g) γ1 %.4g (%.4g)%s\n",
				c.group, c.ampPx, c.crf, c.gop, seed, fn, zeta, o.est.Verdict, o.est.Gamma0, g0, o.est.Gamma1, g1, sweepcmd.Note(o.err))
			out[c] = append(out[c], o)
		}
	}
	return out, nil
}
