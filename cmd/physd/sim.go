package main

import (
	"context"
	"flag"
	"fmt"
	"image"
	"io"
	"strconv"
	"strings"

	"github.com/physd/physd/sim"
)

func cmdSim(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("physd sim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	system := fs.String("system", "pendulum", "pendulum, intensity or scale")
	regime := fs.String("regime", "underdamped", "underdamped, undamped, critical or overdamped (the paper's ground truth)")
	g1 := fs.Float64("gamma1", -1, "γ1, overriding --regime (with --gamma0)")
	g0 := fs.Float64("gamma0", -1, "γ0, overriding --regime (with --gamma1)")
	z0 := fs.Float64("z0", 50, "initial state z(0) (pendulum: degrees)")
	v0s := fs.String("v0", "0", "initial velocity z'(0) (pendulum: degrees/s); a comma-separated list renders one clip per OUT, sharing one observation map")
	dur := 1.5 * 3.141592653589793
	fs.Var(secondsFlag{&dur}, "duration", "clip length in seconds, or a multiple of π like 1.5pi")
	fps := fs.Float64("fps", 0, "frame rate (default: pendulum 20, intensity and scale 10)")
	size := fs.Int("size", sim.DefaultSize, "frame side in pixels")
	seed := fs.Int64("seed", 1, "random seed (shapes, nuisances)")
	nuis := fs.String("nuisance", "", "stress-test nuisance KIND:LEVEL, KIND one of background, clutter, jitter, brightness, LEVEL 1–3")
	y4m := fs.Bool("y4m", false, "write YUV4MPEG2 (.y4m) instead of H.264 mp4")
	crf := fs.Int("crf", 0, "H.264 quality: 0 lossless, else libx264 CRF (e.g. 12, 23) to test lossy cameras")
	perClip := fs.Bool("per-clip", false, "with several --v0, normalise each clip's z over that clip alone (the paper's intensity and scale sets) instead of one map for all; fit them with estimate --offsets per-clip")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: physd sim [flags] OUT.mp4 [OUT2.mp4 …]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("sim: %w: %w", errUsage, err)
	}
	outs := fs.Args()
	if len(outs) == 0 {
		fs.Usage()
		return fmt.Errorf("sim: %w: no output file", errUsage)
	}
	v0, err := parseFloats(*v0s)
	if err != nil {
		return fmt.Errorf("sim: %w: --v0: %w", errUsage, err)
	}
	if len(v0) == 1 && len(outs) > 1 {
		for len(v0) < len(outs) {
			v0 = append(v0, v0[0])
		}
	}
	if len(v0) != len(outs) {
		return fmt.Errorf("sim: %w: %d velocities for %d output files", errUsage, len(v0), len(outs))
	}
	gamma1, gamma0 := *g1, *g0
	if gamma1 < 0 || gamma0 < 0 {
		r, err := sim.ParseRegime(*regime)
		if err != nil {
			return fmt.Errorf("sim: %w: --regime: %w", errUsage, err)
		}
		gamma1, gamma0 = sim.GroundTruth(r)
	}
	var n sim.Nuisance
	if *nuis != "" {
		kind, lvl, ok := strings.Cut(*nuis, ":")
		l, err := strconv.Atoi(lvl)
		if !ok || err != nil {
			return fmt.Errorf("sim: %w: --nuisance %q: want KIND:LEVEL, e.g. jitter:2", errUsage, *nuis)
		}
		n = sim.Nuisance{Kind: sim.NuisanceKind(kind), Level: l}
	}
	if *fps == 0 {
		*fps = sim.DefaultFPS(sim.System(*system))
	}
	scenes := make([]sim.Scene, len(outs))
	for i := range outs {
		scenes[i] = sim.Scene{System: sim.System(*system), Gamma1: gamma1, Gamma0: gamma0,
			Z0: *z0, V0: v0[i], Duration: dur, FPS: *fps, Size: *size, Seed: *seed, Nuisance: n}
		if err := scenes[i].Validate(); err != nil {
			return fmt.Errorf("sim: %w: %w", errUsage, err)
		}
	}
	var frames [][]*image.Gray
	if *perClip {
		frames, err = sim.RenderEach(ctx, scenes)
	} else {
		frames, _, err = sim.RenderSet(ctx, scenes)
	}
	if err != nil {
		return fmt.Errorf("sim: %w", err)
	}
	for i, out := range outs {
		if *y4m {
			err = sim.WriteY4M(out, frames[i], *fps)
		} else {
			err = sim.WriteMP4CRF(ctx, out, frames[i], *fps, *crf)
		}
		if err != nil {
			return fmt.Errorf("sim: %w", err)
		}
		fmt.Fprintf(stdout, "%s: %s, γ1=%g γ0=%g, z0=%g v0=%g, %d frames at %g fps\n",
			out, *system, gamma1, gamma0, *z0, v0[i], len(frames[i]), *fps)
	}
	return nil
}
