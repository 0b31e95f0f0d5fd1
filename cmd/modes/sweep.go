package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"path/filepath"

	"github.com/physd/physd/internal/sweepcmd"
	"github.com/physd/physd/sim"
)

// scene is a set of modes released together, named.
type scene struct {
	name  string
	modes []sim.Mode
	// apart: the modes stand far enough apart (3 half-power bandwidths)
	// to be certified each on its own; a closer scene's target is no
	// false certificate.
	apart bool
}

// scenes are the sweep's mode sets, released from rest (phases 0).
func scenes() []scene {
	m := func(fn, zeta, amp float64) sim.Mode { return sim.Mode{Fn: fn, Zeta: zeta, AmplitudePx: amp} }
	return []scene{
		{"two modes", []sim.Mode{m(1.3, 0.01, 0.5), m(3.1, 0.015, 0.3)}, true},
		{"three modes", []sim.Mode{m(0.8, 0.01, 0.6), m(2.2, 0.01, 0.3), m(4.1, 0.015, 0.2)}, true},
		{"harmonics f 2f 3f", []sim.Mode{m(1.2, 0.01, 0.5), m(2.4, 0.01, 0.3), m(3.6, 0.01, 0.2)}, true},
		{"pair 2.3 bandwidths", []sim.Mode{m(2.0, 0.01, 0.5), m(2.1, 0.01, 0.4)}, false},
		{"pair 0.5 bandwidth", []sim.Mode{m(1.0, 0.02, 0.5), m(1.02, 0.02, 0.5)}, false},
	}
}

// cell is one row of the sweep: a scene as an object kind at a CRF.
type cell struct {
	scene  int // index into scenes()
	object sim.ObjectKind
	crf    int // 0: lossless
}

// cells are every scene as a block, a cable, a beam's edge and a mast,
// lossless and at CRF 23.
func cells() []cell {
	var cs []cell
	for i := range scenes() {
		for _, o := range []sim.ObjectKind{sim.ObjectBlock, sim.ObjectCable, sim.ObjectBeam, sim.ObjectMast} {
			for _, crf := range []int{0, 23} {
				cs = append(cs, cell{scene: i, object: o, crf: crf})
			}
		}
	}
	return cs
}

// number is one certified (γ1, γ0) of an estimate: the window's or a
// separated mode's.
type number struct {
	Gamma0    float64 `json:"gamma0"`
	Gamma1    float64 `json:"gamma1"`
	Zeta      float64 `json:"zeta"`
	Certified bool    `json:"certified"`
}

// estimate is the part of `physd estimate --json` the report reads.
type estimate struct {
	number
	Verdict string     `json:"verdict"`
	Reasons []string   `json:"reasons"`
	Modes   *separated `json:"modes"`
}

// separated is the modes an estimate separated and the readout they
// were read from.
type separated struct {
	Readout string `json:"readout"`
	Modes   []mode `json:"modes"`
}

// mode is one separated mode and, refused, why.
type mode struct {
	number
	Reasons []string `json:"reasons"`
}

// outcome is one estimate of a cell.
type outcome struct {
	seed int
	est  estimate
	err  string
	// inBar and false count the certified numbers in the bar of some
	// mode and outside every mode's; found, the modes of the scene some
	// certified number is in the bar of; separated, the modes the
	// estimate reported.
	inBar, falses, found, separated int
}

// inBarOf is the index of the mode of ms whose bar n is in (|γ0 − γ0*| ≤
// 1 %, |ζ − ζ*| ≤ 25 %), −1 when none.
func inBarOf(n number, ms []sim.Mode) int {
	for i, m := range ms {
		g1, g0 := m.Gammas()
		if math.Abs(n.Gamma0-g0) <= 0.01*g0 && math.Abs(n.Zeta-g1/(2*math.Sqrt(g0))) <= 0.25*m.Zeta {
			return i
		}
	}
	return -1
}

// judge counts e's certified numbers against the scene's modes.
func judge(e estimate, ms []sim.Mode) outcome {
	var o outcome
	nums := []number{}
	if e.Certified {
		nums = append(nums, e.number)
	}
	if e.Modes != nil {
		o.separated = len(e.Modes.Modes)
		for _, m := range e.Modes.Modes {
			if m.Certified {
				nums = append(nums, m.number)
			}
		}
	}
	hit := make([]bool, len(ms))
	for _, n := range nums {
		if i := inBarOf(n, ms); i >= 0 {
			o.inBar++
			hit[i] = true
		} else {
			o.falses++
		}
	}
	for _, h := range hit {
		if h {
			o.found++
		}
	}
	return o
}

// sweep runs every cell's seeds.
func sweep(ctx context.Context, cfg config, dir string, log io.Writer) (map[cell][]outcome, error) {
	dur := 20.0
	seeds := cfg.Seeds
	if cfg.Quick {
		dur, seeds = 8, 1
	}
	sc := scenes()
	out := map[cell][]outcome{}
	for _, c := range cells() {
		for seed := 1; seed <= seeds; seed++ {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			s := sim.Structure{Duration: dur, Seed: int64(seed), Object: c.object, Modes: append([]sim.Mode(nil), sc[c.scene].modes...)}
			frames, _, err := sim.RenderStructure(ctx, s)
			if err != nil {
				return nil, fmt.Errorf("render %s %s seed %d: %w", sc[c.scene].name, c.object, seed, err)
			}
			path := filepath.Join(dir, fmt.Sprintf("%d-%s-crf%d-s%d.mp4", c.scene, c.object, c.crf, seed))
			if err := sim.WriteVideo(ctx, path, frames, s.WithDefaults().FPS, sim.Encoding{CRF: c.crf}); err != nil {
				return nil, fmt.Errorf("encode %s: %w", path, err)
			}
			e, msg := sweepcmd.Estimate[estimate](ctx, cfg, path)
			o := judge(e, s.Modes)
			o.seed, o.est, o.err = seed, e, msg
			fmt.Fprintf(log, "modes: %s %s crf %d seed %d: %s, %d modes separated, %d certified in the bar, %d false%s\n",
				sc[c.scene].name, c.object, c.crf, seed, e.Verdict, o.separated, o.inBar, o.falses, sweepcmd.Note(msg))
			out[c] = append(out[c], o)
		}
	}
	return out, nil
}
