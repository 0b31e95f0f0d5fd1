package main

import (
	"context"
	"fmt"
	"image"
	"io"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/physd/physd/estimator"
	"github.com/physd/physd/sim"
)

// The scale system's three-clip sets (25 frames a clip) are where physd
// misses the accuracy bar. floor measures how much the frames themselves
// allow: it fits, on a long ramp rendered by the same renderer with the
// true state known, the best linear readout of the pixels there is, then
// reads each set's clips with it and fits the ODE trajectory to those
// latents. No estimator that learns its readout from the set alone can be
// expected to do better than a readout fitted with the answer in hand.

// floorRamp is the ramp's length in frames and floorRidge the kernel
// ridge, relative to the mean squared frame norm. More frames or a smaller
// ridge change the figures by less than 0.01 %.
const (
	floorRamp  = 1000
	floorRidge = 1e-8
)

// floorRow is one set's result.
type floorRow struct {
	cell           int // index into the report's cells
	gamma0, gamma1 float64
}

// oracleReadout is a linear readout of a frame's pixels (values in [0,1])
// plus a constant.
type oracleReadout struct {
	w []float64 // per pixel, then the constant
}

func (o oracleReadout) read(g *image.Gray) float64 {
	s := o.w[len(o.w)-1]
	for i, v := range g.Pix {
		s += o.w[i] * float64(v) / 255
	}
	return s
}

// fitOracle renders the state rising linearly through the whole range the
// renderer maps (z normalised over the clip, so the ramp spans it evenly)
// and fits pixel weights by kernel ridge regression to the state.
func fitOracle(ctx context.Context, sys sim.System, size int) (oracleReadout, float64, error) {
	fps := sim.DefaultFPS(sys)
	ramp := sim.Scene{System: sys, Gamma1: 0, Gamma0: 0, Z0: 0, V0: 1, Duration: floorRamp / fps, FPS: fps, Size: size}
	frames, z, err := sim.Render(ctx, ramp)
	if err != nil {
		return oracleReadout{}, 0, fmt.Errorf("ramp: %w", err)
	}
	n, p := len(frames), size*size+1
	X := mat.NewDense(n, p, nil)
	y := mat.NewVecDense(n, nil)
	lo, hi := z[0], z[n-1]
	for k, f := range frames {
		row := X.RawRowView(k)
		for i, v := range f.Pix {
			row[i] = float64(v) / 255
		}
		row[p-1] = 1
		y.SetVec(k, (z[k]-lo)/(hi-lo))
	}
	var K mat.Dense
	K.Mul(X, X.T())
	tr := mat.Trace(&K)
	for i := range n {
		K.Set(i, i, K.At(i, i)+floorRidge*tr/float64(n))
	}
	var a, w, fit mat.VecDense
	if err := a.SolveVec(&K, y); err != nil {
		return oracleReadout{}, 0, fmt.Errorf("ramp readout: %w", err)
	}
	w.MulVec(X.T(), &a)
	fit.MulVec(X, &w)
	var worst float64
	for k := range n {
		worst = max(worst, math.Abs(fit.AtVec(k)-y.AtVec(k)))
	}
	return oracleReadout{w: w.RawVector().Data}, worst, nil
}

// scaleFloor runs the floor on every scale three-clip cell of cs. It
// returns the rows and the oracle's worst error on its ramp, as a
// fraction of the state's range.
func scaleFloor(ctx context.Context, cs []cell) ([]floorRow, float64, error) {
	var rows []floorRow
	var or oracleReadout
	var worst float64
	for i, c := range cs {
		if c.system != sim.SystemScale || len(c.z0) != 3 || !c.perClip {
			continue
		}
		if or.w == nil {
			var err error
			if or, worst, err = fitOracle(ctx, sim.SystemScale, sim.DefaultSize); err != nil {
				return nil, 0, err
			}
		}
		g1, g0 := sim.GroundTruth(c.regime)
		scenes := c.scenes(1)
		frames, err := render(ctx, scenes, true)
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %w", c.name(), err)
		}
		lat := make([][]float64, len(frames))
		for m, fs := range frames {
			for _, f := range fs {
				lat[m] = append(lat[m], or.read(f))
			}
		}
		tf, err := estimator.FitTrajectory(lat, 1/scenes[0].FPS, g1, g0, estimator.ClipOffsets)
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %w", c.name(), err)
		}
		rows = append(rows, floorRow{cell: i, gamma0: tf.Gamma0, gamma1: tf.Gamma1})
	}
	return rows, worst, nil
}

// floorSection writes the floor's table: per set, what the best readout
// of the pixels gives and what physd gives (mean over seeds).
func floorSection(w io.Writer, cs []cell, res [][]outcome, rows []floorRow, worst float64) {
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(w, "\n## Scale three-clip sets: what the frames allow\n\n")
	fmt.Fprintf(w, "These sets have 25 frames a clip, and near either end of a clip's range one half-disc is a few pixels across or less. ")
	fmt.Fprintf(w, "To see how well any readout can do on them, `make paper` fits the best linear readout of the pixels there is: on %d frames of a ramp through the whole range, rendered by the same renderer, with the true state known (kernel ridge regression; worst error on the ramp %.2f %% of the range). ", floorRamp, 100*worst)
	fmt.Fprintf(w, "It then reads each set's clips with it and fits the ODE trajectory to those latents (`estimator.FitTrajectory`, one offset per clip, started at the truth). ")
	fmt.Fprintf(w, "physd learns its readout from the 75 frames alone.\n\n")
	fmt.Fprintf(w, "| setting | truth (γ0, γ1) | best readout γ0 | best readout γ1 | ours γ0 (mean) | ours γ1 (mean) |\n|---|---|---|---|---|---|\n")
	rel := func(v, t float64) string { return fmt.Sprintf("%.4f (%+.2f %%)", v, 100*(v/t-1)) }
	for _, r := range rows {
		c := cs[r.cell]
		t1, t0 := sim.GroundTruth(c.regime)
		var g0s, g1s []float64
		for _, o := range res[r.cell] {
			if o.err == nil {
				g0s, g1s = append(g0s, o.g0), append(g1s, o.g1)
			}
		}
		ours0, ours1 := "—", "—"
		if len(g0s) > 0 {
			m0, _ := meanStd(g0s)
			m1, _ := meanStd(g1s)
			ours0, ours1 = rel(m0, t0), rel(m1, t1)
		}
		fmt.Fprintf(w, "| %s | (%g, %g) | %s | %s | %s | %s |\n", c.label, t0, t1, rel(r.gamma0, t0), rel(r.gamma1, t1), ours0, ours1)
	}
}
