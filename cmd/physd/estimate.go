package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/physd/physd/analysis"
	"github.com/physd/physd/config"
	"github.com/physd/physd/estimator"
	"github.com/physd/physd/internal/figure"
	"github.com/physd/physd/modes"
	"github.com/physd/physd/motion"
	"github.com/physd/physd/roi"
	"github.com/physd/physd/stream"
	"github.com/physd/physd/window"
	"github.com/physd/physd/wire"
)

// estimateReport is the JSON written by 'physd estimate --json'.
type estimateReport struct {
	Videos []videoReport `json:"videos"`
	Preset string        `json:"preset"`
	Seed   uint64        `json:"seed"`
	// Offsets is the offset model fitted: none, shared or per-clip.
	Offsets string  `json:"offsets"`
	Gamma0  float64 `json:"gamma0"`
	Gamma1  float64 `json:"gamma1"`
	Sigma0  float64 `json:"gamma0_sigma"`
	Sigma1  float64 `json:"gamma1_sigma"`
	// Uncertainty says what the σ is made of: a block bootstrap of the
	// output-error fit and a jackknife of the readout.
	Uncertainty *estimator.Uncertainty `json:"uncertainty,omitempty"`
	estimator.Physics
	Verdict   window.Status `json:"verdict"`
	Certified bool          `json:"certified"`
	Reasons   []string      `json:"reasons,omitempty"`
	// ResolvesHz qualifies a certified underdamped estimate: one mode, or
	// modes closer than about this (one half-power bandwidth, 2ζf_n,
	// modes.DecayResolution), which a decay reads as one mode at their
	// mean frequency; absent otherwise.
	ResolvesHz  float64        `json:"resolves_hz,omitempty"`
	Diagnostics window.Verdict `json:"diagnostics"`
	Steps       int            `json:"steps"`
	// Reverted: training made the output error worse, so the encoder it
	// started from was kept.
	Reverted  bool    `json:"training_reverted"`
	ElapsedMS float64 `json:"elapsed_ms"`
	// Plot is the figure written with --plot.
	Plot string `json:"plot,omitempty"`
	// ROI is the region of interest the estimator saw and how it was
	// chosen (estimate_roi.go).
	ROI *roiReport `json:"roi,omitempty"`
	// Camera is the camera's own motion over the segment as measured
	// (--reference) and whether it was removed; absent with --reference off.
	Camera *motion.Track `json:"camera,omitempty"`
	// Exposure is the per-frame exposure normalisation: applied or why
	// not, and the gains measured (absent when the preset has none).
	Exposure *estimator.Exposure `json:"exposure,omitempty"`
	// Amplitude is the displacement amplitude and noise floor in the
	// video's pixels and, with a scale (--scale-…), in millimetres, as
	// physd's estimate messages carry it; absent when not measured.
	Amplitude *wire.Amplitude `json:"amplitude,omitempty"`
	// Modes are the window's modes when its readout rings in two or more,
	// each fitted and certified on its own (analysis.Options.Modes);
	// absent otherwise.
	Modes *modesReport `json:"modes,omitempty"`
}

type videoReport struct {
	Path    string  `json:"path"`
	Frames  int     `json:"frames"`
	FPS     float64 `json:"fps"`
	Assumed string  `json:"timing"`
}

func cmdEstimate(ctx context.Context, args []string, stdout, stderr io.Writer, log *slog.Logger) (int, error) {
	fs := flag.NewFlagSet("physd estimate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fps := fs.Float64("fps", 0, "frame rate, overriding the container's (frames are then evenly spaced)")
	var from, to float64
	fs.Var(secondsFlag{&from}, "from", "start of the segment to use, seconds")
	fs.Var(secondsFlag{&to}, "to", "end of the segment to use, seconds (0: the end)")
	roiFlag := fs.String("roi", "", "region of interest: x,y,w,h in the video's pixels; auto (find where the scene oscillates, an error if nothing does); full (the whole frame) (default: auto, the whole frame if nothing oscillates)")
	size := fs.Int("size", 0, "resize frames to about SIZE² pixels, the region's aspect ratio kept (default: the preset's)")
	preset := fs.String("preset", estimator.DefaultPreset, fmt.Sprintf("training recipe: %v", estimator.PresetNames()))
	steps := fs.Int("steps", -1, "training steps (default: the preset's)")
	offsets := fs.String("offsets", "", "the latent's equilibrium offset: shared (one for all videos: one camera, fixed exposure), per-clip (one per video: videos normalised or exposed each on its own; certification then needs each video to cross levels twice) or none (default: the preset's)")
	seed := fs.Uint64("seed", 1, "random seed")
	asJSON := fs.Bool("json", false, "write one JSON object")
	refFlag := fs.String("reference", referenceAuto, "the camera's own motion: auto (measured from the frames: frames that show the same state displaced from one another), x,y,w,h (a region of the video, in its pixels, that should stay still), or off; measured motion is removed before the fit and a latent that still follows it is refused")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the estimate to this file (go tool pprof); for measuring")
	plotPath := fs.String("plot", "", "also draw the window's latent, fitted ODE solution, covered levels and crossings to `FILE` (.png or .svg)")
	var th window.Thresholds
	fs.Float64Var(&th.MaxRelSigmaFn, "max-rel-sigma-fn", 0, "precision: the largest σ(f_n) as a fraction of f_n a certified estimate may carry (0: the certificate's default, 0.01)")
	fs.Float64Var(&th.MaxRelSigmaZeta, "max-rel-sigma-zeta", 0, "precision: σ(ζ) is accepted up to max(this × ζ, --sigma-zeta-floor) (0: the default, 0.3)")
	fs.Float64Var(&th.SigmaZetaFloor, "sigma-zeta-floor", 0, "precision: σ(ζ) up to this is accepted whatever ζ (0: the default, 0.005)")
	var sf scaleFlags
	sf.register(fs)
	var af ambientFlags
	fs.BoolVar(&af.on, "ambient", false, "the video is an ambient record (a structure driven by wind, traffic, machinery): identify its mode from the displacement's correlation function, read frame by frame (package ambient)")
	fs.Float64Var(&af.calibrate, "calibrate", 30, "ambient: seconds at the start the frozen readout is calibrated on")
	fs.Float64Var(&af.maxLag, "max-lag", 60, "ambient: the longest lag summed, seconds")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: physd estimate [flags] VIDEO [VIDEO …]\n\nOne video is a single trajectory; several are fitted together with shared (γ1, γ0).")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 0, fmt.Errorf("estimate: %w: %w", errUsage, err)
	}
	paths := fs.Args()
	if len(paths) == 0 {
		fs.Usage()
		return 0, fmt.Errorf("estimate: %w: no video given", errUsage)
	}
	p, err := estimator.LookupPreset(*preset)
	if err != nil {
		return 0, fmt.Errorf("estimate: %w: --preset: %w", errUsage, err)
	}
	if *size < 0 {
		return 0, fmt.Errorf("estimate: %w: --size %d is negative", errUsage, *size)
	}
	if *size > 0 {
		p.Size = *size
	}
	if *steps >= 0 {
		p.Steps = *steps
	}
	if *offsets != "" {
		if p.Loss.Offset, err = estimator.ParseOffset(*offsets); err != nil {
			return 0, fmt.Errorf("estimate: %w: --offsets: %w", errUsage, err)
		}
	}
	rep := estimateReport{Preset: p.Name, Seed: *seed, Offsets: p.Loss.Offset.String()}
	if math.IsNaN(*fps) || *fps < 0 || math.IsInf(*fps, 0) {
		return 0, fmt.Errorf("estimate: %w: --fps %g must be a positive rate", errUsage, *fps)
	}
	fset := false
	fs.Visit(func(f *flag.Flag) { fset = fset || f.Name == "fps" })
	if fset && *fps == 0 {
		return 0, fmt.Errorf("estimate: %w: --fps 0 is not a frame rate", errUsage)
	}
	roiSel, err := parseROIChoice(*roiFlag)
	if err != nil {
		return 0, fmt.Errorf("estimate: %w: %w", errUsage, err)
	}
	if af.on {
		if len(paths) != 1 {
			return 0, fmt.Errorf("estimate: %w: --ambient reads one record, got %d videos", errUsage, len(paths))
		}
		if !(af.calibrate > 0) || !(af.maxLag > 0) || math.IsInf(af.calibrate, 0) || math.IsInf(af.maxLag, 0) {
			return 0, fmt.Errorf("estimate: %w: --calibrate %g and --max-lag %g: want positive seconds", errUsage, af.calibrate, af.maxLag)
		}
		return estimateAmbient(ctx, af, paths[0], roiSel, *fps, p.Size, th, *asJSON, stdout, log)
	}
	camSel, err := parseCameraChoice(*refFlag)
	if err != nil {
		return 0, fmt.Errorf("estimate: %w: %w", errUsage, err)
	}
	for name, v := range map[string]float64{"max-rel-sigma-fn": th.MaxRelSigmaFn, "max-rel-sigma-zeta": th.MaxRelSigmaZeta, "sigma-zeta-floor": th.SigmaZetaFloor} {
		if !(v >= 0) || math.IsInf(v, 0) {
			return 0, fmt.Errorf("estimate: %w: --%s %g: want a positive limit (or 0 for the default)", errUsage, name, v)
		}
	}
	if *plotPath != "" {
		if _, err := figure.FormatOf(*plotPath); err != nil {
			return 0, fmt.Errorf("estimate: %w: --plot: %w", errUsage, err)
		}
	}
	scale, err := sf.scale()
	if err != nil {
		return 0, fmt.Errorf("estimate: %w: %w", errUsage, err)
	}

	if *cpuProfile != "" {
		stop, err := startCPUProfile(*cpuProfile)
		if err != nil {
			return 0, fmt.Errorf("estimate: %w", err)
		}
		defer stop()
	}
	pre, roiRep, err := chooseRegion(ctx, roiSel, paths, roi.ScanOptions{From: from, To: to, FPS: *fps},
		stream.Preprocess{Size: p.Size, Binarize: p.Binarize}, log)
	if err != nil {
		return 0, fmt.Errorf("estimate: %w", err)
	}
	rep.ROI = roiRep
	thumb := &stream.Thumbnailer{Interval: 1000 * time.Hour} // the segment's first frame
	var clips []estimator.Clip
	var refs refPatches // the --reference region's patches, read with the frames
	for i, path := range paths {
		vpre := pre
		vpre.Reference = camSel.region
		if i == 0 {
			vpre.Thumb = thumb
		} else { // one frame size for all: videos of another shape are resized to the first's
			vpre.Width, vpre.Height = clips[0].W, clips[0].H
		}
		frames, tm, err := stream.ReadFile(ctx, path, stream.FileOptions{
			Preprocess: vpre,
			FPS:        *fps, From: from, To: to,
		})
		if err != nil {
			return 0, fmt.Errorf("estimate: %w", err)
		}
		if tm.Irregular && *fps == 0 {
			return 0, fmt.Errorf("estimate: %s: frame times are irregular (%s); pick an evenly spaced segment with --from/--to or force a rate with --fps", path, tm.Assumed)
		}
		if !(tm.FPS > 0) {
			return 0, fmt.Errorf("estimate: %s: no usable frame rate (%s); give one with --fps", path, tm.Assumed)
		}
		if len(frames) < estimator.MinFrames {
			return 0, fmt.Errorf("estimate: %s: %d frames in the segment, need at least %d", path, len(frames), estimator.MinFrames)
		}
		if tm.Assumed != "" && !tm.Clean() {
			log.Warn("frame timing", "video", path, "assumed", tm.Assumed)
		}
		if i == 0 {
			roiRep.noteFrames(frames[0], pre)
		}
		clips = append(clips, window.ClipOf(frames, 1/tm.FPS))
		refs.add(frames)
		rep.Videos = append(rep.Videos, videoReport{Path: path, Frames: len(frames), FPS: tm.FPS, Assumed: tm.Assumed})
	}
	if len(clips) > 1 {
		for i, c := range clips[1:] {
			if math.Abs(c.Dt-clips[0].Dt) > 1e-6*clips[0].Dt {
				return 0, fmt.Errorf("estimate: %s runs at %.4g fps but %s at %.4g fps; a multi-trajectory fit needs one rate (use --fps)",
					paths[i+1], 1/c.Dt, paths[0], 1/clips[0].Dt)
			}
			clips[i+1].Dt = clips[0].Dt
		}
	}

	// The heap holds the frames and a few window-sized buffers; a soft
	// limit near that makes the runtime collect instead of growing the
	// heap to twice its live size, the part of the peak resident set that
	// physd controls (the rest is mostly Debian's OpenCV and FFmpeg
	// libraries). $GOMEMLIMIT overrides it.
	if os.Getenv("GOMEMLIMIT") == "" {
		var px int64
		for _, c := range clips {
			px += int64(len(c.Frames) * c.W * c.H)
		}
		debug.SetMemoryLimit(16<<20 + 4*8*px)
	}
	mo, err := cameraMotionOf(camSel, clips, refs, pre.ROI, roiRep.SrcW, roiRep.SrcH)
	if err != nil {
		return 0, fmt.Errorf("estimate: %w", err)
	}
	// One window on all cores: the fit runs beside the camera-motion test
	// and the tracker beside the fit (analysis.Options.Concurrent).
	bar := newProgress(stderr)
	regionW := pre.ROI.W
	if pre.ROI.IsZero() {
		regionW = roiRep.SrcW
	}
	an, err := analysis.Window(ctx, clips, analysis.Options{Preset: p, Thresholds: th, Motion: mo, Seed: *seed,
		Progress: bar.update, Concurrent: true, SourcePx: float64(regionW) / float64(clips[0].W), Modes: true, Log: log})
	bar.done()
	if err != nil {
		return 0, fmt.Errorf("estimate: %w", err)
	}
	track := an.Camera
	rep.Camera = track
	if track != nil && track.Detected {
		log.Info("camera motion", "summary", track.Summary())
	}
	res, v := an.Result, an.Verdict
	rep.Exposure = res.Exposure
	rep.Gamma0, rep.Gamma1, rep.Sigma0, rep.Sigma1 = res.Gamma0, res.Gamma1, res.Sigma0, res.Sigma1
	rep.Physics, rep.Uncertainty = res.Physics, res.Uncertainty
	rep.Verdict, rep.Certified, rep.Reasons, rep.Diagnostics = v.Status, v.Certified, v.Reasons, v
	rep.ResolvesHz = resolvesHz(res.Physics, v.Certified)
	rep.Steps, rep.Reverted, rep.ElapsedMS = res.Steps, res.Reverted, float64(res.Elapsed)/float64(time.Millisecond)
	// The amplitude is in the video's pixels already (whatever the
	// region and the resizing): the scale is all it takes.
	if a := an.Amplitude; a != nil {
		rep.Amplitude = wire.NewAmplitude(a.Px, a.NoisePx, a.Readout, scale.MMPerPx())
		if rep.Amplitude != nil {
			rep.Amplitude.HeldShare = a.HeldShare
		}
	}
	rep.Modes = newModesReport(an.Modes)
	if *plotPath != "" {
		fig := figure.FromResult(strings.Join(paths, ", "), res, v)
		fig.Scene = roiRep.scene(thumb.Latest())
		if err := fig.Save(*plotPath); err != nil {
			return 0, fmt.Errorf("estimate: --plot: %w", err)
		}
		rep.Plot = *plotPath
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(jsonSafe(rep)); err != nil {
			return 0, fmt.Errorf("estimate: %w", err)
		}
	} else {
		printSummary(stdout, rep)
	}
	// The exit status is the window's certificate, as before modes were
	// read: a script that reads it with the top-level γ never takes a
	// mode's certificate for the window's.
	if !v.Certified {
		return exitNotCertified, nil
	}
	return exitOK, nil
}

// scaleFlags are physd estimate's --scale-… flags: a config.Scale given
// on the command line, either way.
type scaleFlags struct {
	points                      string
	mm, distM, focalMM, pixelUM float64
}

// register adds the flags to fs.
func (f *scaleFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.points, "scale-points", "", "millimetres too: two points of the video, `x1,y1,x2,y2` in its pixels, that lie --scale-mm apart on the structure")
	fs.Float64Var(&f.mm, "scale-mm", 0, "the distance between the --scale-points on the structure, in millimetres")
	fs.Float64Var(&f.distM, "scale-distance-m", 0, "millimetres too, by the pinhole camera: its distance to the structure in metres (with --scale-focal-mm and --scale-pixel-um)")
	fs.Float64Var(&f.focalMM, "scale-focal-mm", 0, "the lens's focal length in millimetres (with --scale-distance-m)")
	fs.Float64Var(&f.pixelUM, "scale-pixel-um", 0, "the pitch of one of the video's pixels on the sensor, in micrometres (with --scale-distance-m)")
}

// scale returns the flags' config.Scale (zero when none is given),
// checked as the config checks a camera's (config.Scale.Check). Its
// problems come back on one line, "; " between them, each a wrapped
// *config.ScaleError naming its flag instead of the config's key.
func (f *scaleFlags) scale() (config.Scale, error) {
	s := config.Scale{DistanceMM: f.mm, DistanceM: f.distM, FocalMM: f.focalMM, PixelUM: f.pixelUM}
	if f.points != "" {
		v, err := parseFloats(f.points)
		if err != nil || len(v) != 4 {
			return config.Scale{}, &config.ScaleError{Field: "--scale-points", Msg: fmt.Sprintf("is %q, want x1,y1,x2,y2: two points in the video's pixels", f.points)}
		}
		s.Points = [][]float64{v[:2], v[2:]}
	}
	err := s.Check()
	if err == nil {
		return s, nil
	}
	// The config's keys as flags; distance_mm before distance_m.
	names := strings.NewReplacer("distance_mm", "--scale-mm", "distance_m", "--scale-distance-m", "focal_mm", "--scale-focal-mm",
		"pixel_um", "--scale-pixel-um", "points and", "--scale-points and")
	var errs []any
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var se *config.ScaleError
		if !errors.As(e, &se) {
			return config.Scale{}, fmt.Errorf("scale: %w", e)
		}
		field, msg := names.Replace(se.Field), names.Replace(se.Msg)
		if i, ok := strings.CutPrefix(se.Field, "points["); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(i, "]"))
			field, msg = "--scale-points", fmt.Sprintf("point %d (x%d,y%d) %s", n+1, n+1, n+1, msg)
		} else if se.Field == "points" {
			field = "--scale-points"
		}
		errs = append(errs, &config.ScaleError{Field: field, Msg: msg})
	}
	// One line, every problem wrapped.
	return config.Scale{}, fmt.Errorf(strings.TrimSuffix(strings.Repeat("%w; ", len(errs)), "; "), errs...)
}

// jsonSafe round-trips the report through a map so NaN/Inf (e.g. an empty
// coverage interval) become null instead of failing the encoder.
func jsonSafe(rep estimateReport) any {
	zeroNaN(&rep.Zeta)
	zeroVerdictNaN(&rep.Diagnostics)
	return rep
}

// zeroNaN sets a NaN or infinite *f to 0, which JSON can carry.
func zeroNaN(f *float64) {
	if math.IsNaN(*f) || math.IsInf(*f, 0) {
		*f = 0
	}
}

// resolvesHz is what qualifies a certificate of p: modes closer than
// about one half-power bandwidth read as one (modes.DecayResolution); 0
// (absent) unless p is certified and underdamped.
func resolvesHz(p estimator.Physics, certified bool) float64 {
	if r := modes.DecayResolution(p.FreqN, p.Zeta); certified && p.Regime == estimator.Underdamped && !math.IsNaN(r) {
		return r
	}
	return 0
}

// zeroVerdictNaN zeroes a verdict's fields that are NaN when their test
// had nothing to read.
func zeroVerdictNaN(v *window.Verdict) {
	for _, f := range []*float64{&v.Coverage.Lo, &v.Coverage.Hi, &v.RelResidual, &v.Conditioning.Bound} {
		zeroNaN(f)
	}
}

func printSummary(w io.Writer, r estimateReport) {
	for _, v := range r.Videos {
		fmt.Fprintf(w, "video     %s: %d frames at %.4g fps", v.Path, v.Frames, v.FPS)
		if v.Assumed != "" {
			fmt.Fprintf(w, " (%s)", v.Assumed)
		}
		fmt.Fprintln(w)
	}
	if r.ROI != nil {
		fmt.Fprintf(w, "region    %s\n", r.ROI.summary())
	}
	if d := r.Diagnostics; d.Readout != "" {
		fmt.Fprintf(w, "readout   %s", d.Readout)
		for _, a := range d.Alternatives {
			fmt.Fprintf(w, "; weighed against %s (γ0 %.5g, γ1 %.4g, %s)", a.Readout, a.Gamma0, a.Gamma1, a.Verdict)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "γ0        %.5f ± %.5f\n", r.Gamma0, r.Sigma0)
	fmt.Fprintf(w, "γ1        %.5f ± %.5f\n", r.Gamma1, r.Sigma1)
	fmt.Fprintf(w, "f_n       %.4f ± %.4f Hz   (ω_n %.4f rad/s)\n", r.FreqN, r.SigmaF, r.OmegaN)
	fmt.Fprintf(w, "ζ         %.4f ± %.4f      (%s", r.Zeta, r.SigmaZ, r.Regime)
	if r.FreqD > 0 {
		fmt.Fprintf(w, ", damped frequency %.4f Hz", r.FreqD)
	}
	fmt.Fprintln(w, ")")
	if a := r.Amplitude; a != nil {
		fmt.Fprintf(w, "amplitude %s, read by %s", amplitudeText(a), a.Readout)
		if a.MMPerPx != nil {
			fmt.Fprintf(w, "; scale %s mm/px", sig3(*a.MMPerPx))
		}
		fmt.Fprintln(w)
	} else {
		fmt.Fprintln(w, "amplitude not measured")
	}
	d := r.Diagnostics
	cov := "no"
	if d.Coverage.Holds {
		cov = fmt.Sprintf("yes, on [%.3g, %.3g] (%.0f%% of the samples)", d.Coverage.Lo, d.Coverage.Hi, 100*d.Coverage.Width)
	}
	fmt.Fprintf(w, "coverage  %s; ψ_min %.3f; residual %.3f of the signal\n", cov, d.Conditioning.PsiMin, d.RelResidual)
	pr, ok := d.Precision, "within"
	if !pr.Holds {
		ok = "beyond"
	}
	fmt.Fprintf(w, "precision σ(f_n) %.3g%% of f_n (limit %.3g%%), σ(ζ) %.3g (limit %.3g): %s the limits; identified (unique): %s\n",
		100*pr.RelSigmaFn, 100*pr.LimitFn, pr.SigmaZeta, pr.LimitZeta, ok, map[bool]string{true: "yes", false: "no"}[d.Identified])
	fmt.Fprintf(w, "verdict   %s\n", r.Verdict)
	for _, why := range r.Reasons {
		fmt.Fprintf(w, "          - %s\n", why)
	}
	if r.ResolvesHz > 0 {
		fmt.Fprintf(w, "resolves  one mode, or modes closer than about %.2g Hz (one half-power bandwidth): a decay reads a pair that close as one mode at their mean frequency\n", r.ResolvesHz)
	}
	r.Modes.print(w)
	fmt.Fprintf(w, "took      %.0f ms, %d training steps, preset %s, offsets %s\n", r.ElapsedMS, r.Steps, r.Preset, r.Offsets)
	if r.Reverted {
		fmt.Fprintf(w, "          training raised the output error; the encoder it started from was kept\n")
	}
	if r.Plot != "" {
		fmt.Fprintf(w, "plot      %s\n", r.Plot)
	}
}

// progress draws a bar on a terminal and nothing elsewhere.
type progress struct {
	w    io.Writer
	tty  bool
	last time.Time
}

func newProgress(w io.Writer) *progress {
	p := &progress{w: w}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

func (p *progress) update(step, total int, loss float64) {
	if !p.tty || total == 0 || (time.Since(p.last) < 100*time.Millisecond && step < total) {
		return
	}
	p.last = time.Now()
	const width = 30
	n := width * step / total
	bar := make([]byte, width)
	for i := range bar {
		bar[i] = '.'
		if i < n {
			bar[i] = '#'
		}
	}
	fmt.Fprintf(p.w, "\rtraining [%s] %d/%d loss %.3g ", bar, step, total, loss)
}

func (p *progress) done() {
	if p.tty && !p.last.IsZero() {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
