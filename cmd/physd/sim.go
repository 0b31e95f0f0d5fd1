package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"image"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/physd/physd/sim"
)

func cmdSim(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("physd sim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	system := fs.String("system", "pendulum", "pendulum, intensity or scale (the paper's systems), or structure (a structure vibrating by fractions of a pixel over a textured background; see --object)")
	regime := fs.String("regime", "underdamped", "underdamped, undamped, critical or overdamped (the paper's ground truth)")
	g1 := fs.Float64("gamma1", -1, "γ1, overriding --regime (with --gamma0)")
	g0 := fs.Float64("gamma0", -1, "γ0, overriding --regime (with --gamma1)")
	z0 := fs.Float64("z0", 50, "initial state z(0) (pendulum: degrees)")
	v0s := fs.String("v0", "0", "initial velocity z'(0) (pendulum: degrees/s); a comma-separated list renders one clip per OUT, sharing one observation map")
	dur := 1.5 * 3.141592653589793
	fs.Var(secondsFlag{&dur}, "duration", "clip length in seconds, or a multiple of π like 1.5pi (structure: default 20)")
	fps := fs.Float64("fps", 0, "frame rate (default: pendulum 20, intensity and scale 10, structure 30)")
	size := fs.Int("size", sim.DefaultSize, "frame side in pixels")
	seed := fs.Int64("seed", 1, "random seed (shapes, nuisances; structure: textures and noise)")
	nuis := fs.String("nuisance", "", "stress-test nuisance KIND:LEVEL, KIND one of background, clutter, jitter, brightness, LEVEL 1–3")
	y4m := fs.Bool("y4m", false, "write YUV4MPEG2 (.y4m) instead of an mp4")
	crf := fs.Int("crf", 0, "quality: 0 lossless, else the encoder's CRF 1–51 (e.g. 18, 30, 38) to test lossy cameras")
	gop := fs.Int("gop", 0, "a keyframe exactly every GOP frames, as a camera's I-frame interval (0: the encoder's default, at most 250 apart plus scene cuts)")
	codec := fs.String("codec", string(sim.CodecH264), "h264 (libx264) or h265 (libx265)")
	perClip := fs.Bool("per-clip", false, "with several --v0, normalise each clip's z over that clip alone (the paper's intensity and scale sets) instead of one map for all; fit them with estimate --offsets per-clip")
	var st structureFlags
	st.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: physd sim [flags] OUT.mp4 [OUT2.mp4 …]")
		fmt.Fprintln(stderr, "       physd sim --system structure [flags] OUT.mp4   (ground truth in OUT.truth.json)")
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
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	enc, err := encodingFlags(*codec, *crf, *gop, set, *y4m)
	if err != nil {
		return err
	}
	if *system == structureSystem {
		for _, name := range []string{"regime", "gamma1", "gamma0", "z0", "v0", "size", "nuisance", "per-clip"} {
			if set[name] {
				return fmt.Errorf("sim: %w: --%s does not apply to --system structure (see --width, --height, --fn, --zeta, --amplitude, --modes)", errUsage, name)
			}
		}
		if !set["duration"] {
			dur = defaultStructureDuration
		}
		return simStructure(ctx, &st, set, outs, dur, *fps, *seed, *y4m, enc, stdout)
	}
	for _, name := range st.names() {
		if set[name] {
			return fmt.Errorf("sim: %w: --%s applies only to --system %s", errUsage, name, structureSystem)
		}
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
		switch {
		case *y4m:
			err = sim.WriteY4M(out, frames[i], *fps)
		case set["codec"] || set["gop"]:
			err = sim.WriteVideo(ctx, out, frames[i], *fps, enc)
		default:
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

// structureSystem is the --system value of the small-motion scenes
// (sim.Structure).
const structureSystem = "structure"

// defaultStructureDuration is the clip length of --system structure
// without --duration: 20 s, as in the measurements of the issue that
// asked for it.
const defaultStructureDuration = 20

// structureFlags are the flags of --system structure.
type structureFlags struct {
	object, modes                   *string
	width, height                   *int
	fn, zeta, amplitude             *float64
	direction, noise, texture, blur *float64
	objectSize                      *float64
	excitation, forcing             *string
	coloured, impulses              *string
	// mode holds each --mode, in order.
	mode []string
}

func (f *structureFlags) register(fs *flag.FlagSet) {
	f.object = fs.String("object", string(sim.ObjectBlock), "structure: block (a dark square hanging on a line), cable (a thin line across the frame), beam (the edge of a large textured region) or mast (a pole bending as a cantilever; the amplitude is its tip's)")
	f.width = fs.Int("width", sim.DefaultStructureW, "structure: frame width in pixels")
	f.height = fs.Int("height", sim.DefaultStructureH, "structure: frame height in pixels")
	f.fn = fs.Float64("fn", 2, "structure: natural frequency in Hz")
	f.zeta = fs.Float64("zeta", 0.01, "structure: damping ratio ζ; the truth is γ1 = 2ζω, γ0 = ω², ω = 2π·fn")
	f.amplitude = fs.Float64("amplitude", 1, "structure: initial amplitude of the free decay in pixels (e.g. 0.1, 0.3, 2)")
	f.modes = fs.String("modes", "", "structure: several modes FN:ZETA:AMP[:PHASE],… (Hz, ratio, px, rad) instead of --fn, --zeta, --amplitude")
	fs.Func("mode", "structure: one mode FN:ZETA:AMP[:PHASE] (Hz, ratio, px, rad), repeatable: --mode 1:0.01:3 --mode 2.7:0.02:1 is --modes 1:0.01:3,2.7:0.02:1", func(v string) error {
		f.mode = append(f.mode, v)
		return nil
	})
	f.direction = fs.Float64("direction", 0, "structure: direction of motion in degrees, 0 right, 90 down (default: block and mast 0, cable and beam 90); the cable, beam and mast lie across it")
	f.noise = fs.Float64("noise", sim.DefaultNoise, "structure: Gaussian pixel noise, standard deviation as a fraction of full scale (0: none)")
	f.texture = fs.Float64("texture", sim.DefaultBackgroundContrast, "structure: background texture contrast, standard deviation as a fraction of full scale (0: flat)")
	f.objectSize = fs.Float64("object-size", 0, "structure: the block's side, the cable's or mast's thickness in pixels (0: the object's default)")
	f.blur = fs.Float64("blur", 0, "structure: Gaussian lens blur, standard deviation in pixels (0: none)")
	f.excitation = fs.String("excitation", string(sim.ExcitationFree), "structure: free (a decay from --amplitude) or ambient[:RMS] (every mode driven by its own white noise, stationary RMS px: RMS for every mode, else --amplitude or each --modes AMP; ζ > 0)")
	f.forcing = fs.String("forcing", "", "structure: harmonic:HZ[:AMP[:PHASE]] adds AMP·cos(2π·HZ·t + PHASE) px (AMP default 1 px, PHASE rad), a machine at a fixed speed")
	f.coloured = fs.String("coloured", "", "structure: RMS:CORNERHZ adds low-pass (Ornstein–Uhlenbeck) noise of RMS px and corner CORNERHZ, broadband motion without a resonance")
	f.impulses = fs.String("impulses", "", "structure: PERMIN:AMP knocks every mode at random (Poisson) times, PERMIN a minute on average, each swinging a mode at rest by about AMP px")
}

// names lists the flags that apply only to --system structure.
func (f *structureFlags) names() []string {
	return []string{"object", "width", "height", "fn", "zeta", "amplitude", "modes", "mode", "direction", "noise", "texture", "object-size", "blur",
		"excitation", "forcing", "coloured", "impulses"}
}

// encodingFlags checks --codec, --crf and --gop, naming the flag at fault.
func encodingFlags(codec string, crf, gop int, set map[string]bool, y4m bool) (sim.Encoding, error) {
	enc := sim.Encoding{Codec: sim.Codec(codec), CRF: crf, GOP: gop}
	switch {
	case enc.Codec != sim.CodecH264 && enc.Codec != sim.CodecH265:
		return enc, fmt.Errorf("sim: %w: --codec %q: want %s or %s", errUsage, codec, sim.CodecH264, sim.CodecH265)
	case crf > sim.MaxCRF:
		return enc, fmt.Errorf("sim: %w: --crf %d: want 0 (lossless) to %d", errUsage, crf, sim.MaxCRF)
	case gop < 0:
		return enc, fmt.Errorf("sim: %w: --gop %d: want a keyframe interval ≥ 1 frame, or 0 for the encoder's default", errUsage, gop)
	case y4m && (set["codec"] || set["gop"]):
		return enc, fmt.Errorf("sim: %w: --codec and --gop do not apply to --y4m (uncompressed)", errUsage)
	}
	return enc, enc.Validate()
}

// parseModes reads --modes: FN:ZETA:AMP[:PHASE] items separated by commas.
func parseModes(s string) ([]sim.Mode, error) {
	var modes []sim.Mode
	for _, item := range strings.Split(s, ",") {
		parts := strings.Split(strings.TrimSpace(item), ":")
		if len(parts) < 3 || len(parts) > 4 {
			return nil, fmt.Errorf("%q: want FN:ZETA:AMP or FN:ZETA:AMP:PHASE (Hz, ratio, px, rad), e.g. 2:0.01:0.5", item)
		}
		v, err := parseFloats(strings.Join(parts, ","))
		if err != nil {
			return nil, fmt.Errorf("%q: %w", item, err)
		}
		m := sim.Mode{Fn: v[0], Zeta: v[1], AmplitudePx: v[2]}
		if len(v) == 4 {
			m.Phase = v[3]
		}
		modes = append(modes, m)
	}
	return modes, nil
}

// parseFields reads n to max colon-separated finite numbers.
func parseFields(s string, n, max int) ([]float64, error) {
	parts := strings.Split(s, ":")
	if len(parts) < n || len(parts) > max {
		return nil, errors.New("wrong number of fields")
	}
	v := make([]float64, len(parts))
	for i, p := range parts {
		x, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("%q is not a finite number", p)
		}
		v[i] = x
	}
	return v, nil
}

// apply applies --excitation, --forcing, --coloured and
// --impulses to s (whose modes are set), naming the flag at fault.
func (f *structureFlags) apply(s *sim.Structure, set map[string]bool) error {
	kind, rms, hasRMS := strings.Cut(*f.excitation, ":")
	switch sim.Excitation(kind) {
	case sim.ExcitationFree:
		if hasRMS {
			return fmt.Errorf("sim: %w: --excitation %q: free takes no RMS; want free, ambient or ambient:RMS", errUsage, *f.excitation)
		}
	case sim.ExcitationAmbient:
		s.Excitation = sim.ExcitationAmbient
		if !hasRMS {
			break
		}
		v, err := parseFields(rms, 1, 1)
		if err != nil || v[0] < 0 {
			return fmt.Errorf("sim: %w: --excitation %q: want ambient:RMS with RMS ≥ 0 px, e.g. ambient:0.5", errUsage, *f.excitation)
		}
		if set["amplitude"] {
			return fmt.Errorf("sim: %w: --amplitude and --excitation ambient:RMS both give the RMS; use one", errUsage)
		}
		for i := range s.Modes {
			s.Modes[i].AmplitudePx = v[0]
		}
	default:
		return fmt.Errorf("sim: %w: --excitation %q: want free, ambient or ambient:RMS", errUsage, *f.excitation)
	}
	if *f.forcing != "" {
		kind, rest, _ := strings.Cut(*f.forcing, ":")
		v, err := parseFields(rest, 1, 3)
		if kind != "harmonic" || err != nil {
			return fmt.Errorf("sim: %w: --forcing %q: want harmonic:HZ[:AMP[:PHASE]] (Hz, px, rad), e.g. harmonic:5:0.3", errUsage, *f.forcing)
		}
		h := sim.Harmonic{Hz: v[0], AmplitudePx: 1}
		if len(v) > 1 {
			h.AmplitudePx = v[1]
		}
		if len(v) > 2 {
			h.Phase = v[2]
		}
		s.Forcing = &h
	}
	if *f.coloured != "" {
		v, err := parseFields(*f.coloured, 2, 2)
		if err != nil {
			return fmt.Errorf("sim: %w: --coloured %q: want RMS:CORNERHZ (px, Hz), e.g. 0.2:1: %w", errUsage, *f.coloured, err)
		}
		s.Coloured = &sim.ColouredNoise{RMSPx: v[0], CornerHz: v[1]}
	}
	if *f.impulses != "" {
		v, err := parseFields(*f.impulses, 2, 2)
		if err != nil {
			return fmt.Errorf("sim: %w: --impulses %q: want PERMIN:AMP (knocks a minute, px), e.g. 2:0.5: %w", errUsage, *f.impulses, err)
		}
		s.Impulses = &sim.Impulses{PerMinute: v[0], AmplitudePx: v[1]}
	}
	return nil
}

// modesFlagOf is the flag that gave the modes ("" for --fn, --zeta,
// --amplitude).
func modesFlagOf(set map[string]bool) string {
	switch {
	case set["mode"]:
		return "mode"
	case set["modes"]:
		return "modes"
	}
	return ""
}

// structureFlagFor names the flag behind a sim.StructureError field;
// modesFlag is the flag that gave the modes (modesFlagOf).
func structureFlagFor(field string, modesFlag string) string {
	switch {
	case strings.HasPrefix(field, "Forcing."):
		return "forcing"
	case strings.HasPrefix(field, "Coloured."):
		return "coloured"
	case strings.HasPrefix(field, "Impulses."):
		return "impulses"
	}
	if modesFlag != "" && strings.HasPrefix(field, "Modes") {
		return modesFlag
	}
	switch {
	case strings.HasSuffix(field, ".Fn"):
		return "fn"
	case strings.HasSuffix(field, ".Zeta"):
		return "zeta"
	case strings.HasSuffix(field, ".AmplitudePx"), field == "Modes":
		return "amplitude"
	case strings.HasPrefix(field, "Background."):
		return "texture"
	}
	return map[string]string{"W": "width", "H": "height", "FPS": "fps", "Duration": "duration", "Object": "object",
		"Size": "object-size", "Direction": "direction", "Noise": "noise", "Blur": "blur", "Excitation": "excitation"}[field]
}

// structureTruthFile is the JSON written next to a --system structure
// clip: the scene's ground truth, the encoding and the true displacement
// of every frame.
type structureTruthFile struct {
	Video string `json:"video"`
	sim.StructureTruth
	// Encoding is nil for --y4m.
	Encoding       *sim.Encoding `json:"encoding,omitempty"`
	DisplacementPx []float64     `json:"displacement_px"`
}

// truthPath is OUT with its extension replaced by ".truth.json".
func truthPath(out string) string {
	return strings.TrimSuffix(out, filepath.Ext(out)) + ".truth.json"
}

// simStructure renders one sim.Structure clip to outs[0] and writes its
// ground truth next to it.
func simStructure(ctx context.Context, f *structureFlags, set map[string]bool, outs []string, dur, fps float64,
	seed int64, y4m bool, enc sim.Encoding, stdout io.Writer) error {
	if len(outs) != 1 {
		return fmt.Errorf("sim: %w: --system %s renders one clip, got %d output files", errUsage, structureSystem, len(outs))
	}
	out := outs[0]
	s := sim.Structure{W: *f.width, H: *f.height, FPS: fps, Duration: dur, Seed: seed, Object: sim.ObjectKind(*f.object),
		Size: *f.objectSize, Noise: *f.noise, Blur: *f.blur, Background: sim.Texture{Contrast: *f.texture}}
	for _, v := range []struct {
		name   string
		v, max float64
	}{{"noise", *f.noise, sim.MaxNoise}, {"texture", *f.texture, sim.MaxTextureContrast}} {
		if !(v.v >= 0 && v.v <= v.max) {
			return fmt.Errorf("sim: %w: --%s %v: want 0 (none) to %v of full scale", errUsage, v.name, v.v, v.max)
		}
	}
	if *f.noise == 0 {
		s.Noise = sim.Off
	}
	if *f.texture == 0 {
		s.Background.Contrast = sim.Off
	}
	if set["direction"] {
		s.Direction = sim.Deg(*f.direction)
	}
	for _, v := range []struct {
		name string
		v    int
	}{{"width", *f.width}, {"height", *f.height}} {
		if v.v == 0 { // 0 would select the default
			return fmt.Errorf("sim: %w: --%s 0: want %d..%d pixels", errUsage, v.name, sim.MinSize, sim.MaxSize)
		}
	}
	if set["mode"] {
		if set["modes"] {
			return fmt.Errorf("sim: %w: --mode and --modes both give the modes; use one", errUsage)
		}
		for _, name := range []string{"fn", "zeta", "amplitude"} {
			if set[name] {
				return fmt.Errorf("sim: %w: --%s and --mode both give the modes; use one", errUsage, name)
			}
		}
		for i, m := range f.mode {
			if strings.Contains(m, ",") {
				return fmt.Errorf("sim: %w: --mode %q (the %d.): one mode a flag; several in one flag are --modes", errUsage, m, i+1)
			}
			modes, err := parseModes(m)
			if err != nil {
				return fmt.Errorf("sim: %w: --mode %q (the %d.): %w", errUsage, m, i+1, err)
			}
			s.Modes = append(s.Modes, modes...)
		}
	} else if set["modes"] {
		for _, name := range []string{"fn", "zeta", "amplitude"} {
			if set[name] {
				return fmt.Errorf("sim: %w: --%s and --modes both give the modes; use one", errUsage, name)
			}
		}
		modes, err := parseModes(*f.modes)
		if err != nil {
			return fmt.Errorf("sim: %w: --modes: %w", errUsage, err)
		}
		s.Modes = modes
	} else {
		s.Modes = []sim.Mode{{Fn: *f.fn, Zeta: *f.zeta, AmplitudePx: *f.amplitude}}
	}
	if err := f.apply(&s, set); err != nil {
		return err
	}
	// usage names the flag behind an invalid scene.
	usage := func(err error) error {
		var se *sim.StructureError
		if errors.As(err, &se) {
			if name := structureFlagFor(se.Field, modesFlagOf(set)); name != "" {
				return fmt.Errorf("sim: %w: --%s: %w", errUsage, name, err)
			}
		}
		if errors.Is(err, sim.ErrInvalidScene) {
			return fmt.Errorf("sim: %w: %w", errUsage, err)
		}
		return fmt.Errorf("sim: %w", err)
	}
	var d []float64
	if y4m {
		if err := s.Validate(); err != nil {
			return usage(err)
		}
		frames, dd, err := sim.RenderStructure(ctx, s)
		if err != nil {
			return fmt.Errorf("sim: %w", err)
		}
		if err := sim.WriteY4M(out, frames, s.WithDefaults().FPS); err != nil {
			return fmt.Errorf("sim: %w", err)
		}
		d = dd
	} else {
		// Streamed: memory stays bounded however long the clip.
		var err error
		if d, err = sim.WriteStructureVideo(ctx, out, s, enc); err != nil {
			return usage(err)
		}
	}
	s = s.WithDefaults()
	truth := structureTruthFile{Video: out, StructureTruth: s.Truth(), DisplacementPx: d}
	if !y4m {
		truth.Encoding = &enc
	}
	b, err := json.MarshalIndent(truth, "", "  ")
	if err != nil {
		return fmt.Errorf("sim: %w", err)
	}
	tp := truthPath(out)
	if err := os.WriteFile(tp, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("sim: ground truth: %w", err)
	}
	var modes []string
	for _, m := range truth.Modes {
		amp := "A"
		if s.Excitation == sim.ExcitationAmbient {
			amp = "rms"
		}
		modes = append(modes, fmt.Sprintf("fn=%g Hz ζ=%g %s=%g px (γ1=%.6g γ0=%.6g)", m.Fn, m.Zeta, amp, m.AmplitudePx, m.Gamma1, m.Gamma0))
	}
	if len(modes) == 0 {
		modes = []string{"no modes"}
		if s.Forcing == nil && s.Coloured == nil {
			modes = []string{"still"}
		}
	}
	excitation := string(s.Excitation) + " excitation"
	if h := s.Forcing; h != nil {
		excitation += fmt.Sprintf(", forcing %g Hz %g px", h.Hz, h.AmplitudePx)
	}
	if c := s.Coloured; c != nil {
		excitation += fmt.Sprintf(", coloured noise %g px rms to %g Hz", c.RMSPx, c.CornerHz)
	}
	if im := truth.Impulses; im != nil {
		excitation += fmt.Sprintf(", %d knocks of %g px", len(im.KnockTimes), im.AmplitudePx)
	}
	coding := "y4m"
	if !y4m {
		coding = fmt.Sprintf("%s crf %d gop %d", enc.Codec, enc.CRF, enc.GOP)
	}
	fmt.Fprintf(stdout, "%s: structure %s, %s, %s, %dx%d, direction %g°, noise %g, %d frames at %g fps, %s; truth in %s\n",
		out, s.Object, excitation, strings.Join(modes, ", "), s.W, s.H, math.Round(*s.Direction*1e6)/1e6, truth.Noise, len(d), s.FPS, coding, tp)
	return nil
}
