package analysis

import (
	"context"
	"math"

	"github.com/physd/physd/estimator"
	"github.com/physd/physd/flow"
	"github.com/physd/physd/modes"
	"github.com/physd/physd/tracker"
	"github.com/physd/physd/window"
)

// Modes are the modes a window's readout rings in (Options.Modes).
type Modes struct {
	// Readout names the readout they were read from and PxPerUnit the
	// source pixels one of its units spans.
	Readout   string
	PxPerUnit float64
	// Modes are the readout's modes by frequency, each fitted and
	// certified on its own (modes.Separate).
	Modes []modes.Mode
}

// Certified counts the certified modes.
func (m *Modes) Certified() int {
	if m == nil {
		return 0
	}
	n := 0
	for _, md := range m.Modes {
		if md.Verdict.Certified {
			n++
		}
	}
	return n
}

// modesCover is the least share of a clip a followed object's longest
// run must span for its modes to be read.
const modesCover = 0.75

// modeSeries is one readout's series for modes.SeparateClips, one per
// clip.
type modeSeries struct {
	name      string
	x         [][]float64
	pxPerUnit float64
}

// findModes separates the modes of a window on each of its readouts
// linear in the displacement — the small-motion reading where the motion
// is within its linear model (of every clip), each object followed
// through most of every clip without a break (tracker.Ahead.Longest) —
// and keeps the readout with the most certified modes (the first of them
// on a tie, in that order). A window of several clips (an event window's
// releases) has each mode fitted over the clips that carry it
// (modes.SeparateClips). nil when no readout holds two spectral lines.
// The encoder's latent is not read: a learned readout is a nonlinear
// function of the displacement, and a decay's harmonics through it (at
// 2f and 3f, decaying 2 and 3 times as fast) satisfy ODEs of their own
// and would be certified as modes; so would a saturated reading's.
//
// reading is the window's small-motion reading (one clip); seen, the
// frames the encoder saw, are read clip by clip for a window of several.
func (a *run) findModes(ctx context.Context, clips []estimator.Clip, seen []estimator.Clip, reading *flow.Reading, ahead *tracker.Ahead) *Modes {
	if len(clips) == 0 {
		return nil
	}
	src := a.opt.SourcePx
	if !(src > 0) {
		src = 1
	}
	var series []modeSeries
	readings := []*flow.Reading{reading}
	if len(clips) > 1 {
		readings = readings[:0]
		for _, c := range seen {
			rd, err := flow.ReadBinned(c)
			if err != nil {
				readings = nil
				break
			}
			readings = append(readings, rd)
		}
	}
	// Only the frames within the linear model: a saturated swing's
	// distortion is a harmonic.
	var flowX [][]float64
	for _, rd := range readings {
		if rd == nil || rd.Moving == 0 || rd.Explained < flow.MinExplained {
			flowX = nil
			break
		}
		from := rd.LinearFrom()
		if 2*from > len(rd.Z) {
			flowX = nil
			break
		}
		flowX = append(flowX, rd.Z[from:])
	}
	if len(flowX) == len(clips) {
		series = append(series, modeSeries{flow.ReadoutFlow, flowX, src})
	}
	// Every object followed through the clips, whether or not one mode's
	// ODE fits its path (the tracker offers only those that do as a
	// window's readout; a structure ringing in two modes fits none).
	if ahead != nil {
		names, lat := ahead.Longest(modesCover)
		for i, z := range lat {
			series = append(series, modeSeries{names[i], z, src})
		}
	}
	var best *Modes
	opt := modes.Options{Preset: a.opt.Preset, Thresholds: a.opt.Thresholds}
	for _, s := range series {
		ms, err := modes.SeparateClips(ctx, s.name, s.x, clips[0].Dt, opt)
		if err != nil {
			a.opt.Log.Debug("no modes", "readout", s.name, "err", err)
			continue
		}
		if len(ms) == 0 {
			continue
		}
		got := &Modes{Readout: s.name, PxPerUnit: s.pxPerUnit, Modes: ms}
		if best == nil || got.Certified() > best.Certified() {
			best = got
		}
	}
	return best
}

// pairCheck refuses a certified estimate of one clip whose latent is two
// modes within one spectral line (modes.Pair): one mode fitted to a
// close pair reads their mean frequency, off both by half their spacing,
// and the certificate's other checks do not see it (the beat bends the
// envelope smoothly; the fit check reads it as small misfit). An event
// window's releases are compared instead (modes.Agree): a close pair
// whose shares differ from release to release rings at a different
// frequency in each, what one free decay cannot show.
func (a *run) pairCheck() {
	r := a.rep.Result
	if !a.rep.Verdict.Certified || r == nil || len(r.Latents) == 0 || !(r.Dt > 0) {
		return
	}
	q := r.Gamma0 - r.Gamma1*r.Gamma1/4
	if !(q > 0) {
		return
	}
	var why string
	if len(r.Latents) > 1 {
		ag, err := modes.Agree(r.Latents, r.Dt, math.Sqrt(q))
		if err != nil {
			a.opt.Log.Debug("no agreement test", "err", err)
		} else {
			_, why = ag.Apart()
		}
	} else {
		p, err := modes.Pair(r.Latents[0], r.Dt, math.Sqrt(q))
		if err != nil {
			a.opt.Log.Debug("no pair test", "err", err)
		} else {
			_, why = p.Close()
		}
	}
	a.rep.Verdict.Hold(window.CheckSeparated, false, why)
}
