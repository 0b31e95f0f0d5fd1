//go:build !nocv

package daemon

import (
	"context"
	"encoding/json"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/physd/physd/config"
	"github.com/physd/physd/frame"
	"github.com/physd/physd/sim"
	"github.com/physd/physd/wire"
)

// TestAmbientCameraFile runs a file camera in mode ambient through the
// whole daemon: a 64×64 clip of one mode (3 Hz, ζ 2 %, 0.5 px rms)
// driven by white noise, H.264 at CRF 23, 20 minutes read as fast as they
// decode, with lags to 20 s, a 20-second calibration and a 30-second
// hop, under a 16-minute record and a 4-minute one. A record is offered
// once it is full and then every hop to the end of the file: each must
// come as a diagnostic of one record spanning its length, with its
// reasons when refused and, when estimated, the ambient facts matching
// the schema. Every certified estimate must decode against the schema,
// carry the same facts and an amplitude, and lie within 3σ of the truth;
// at 16 minutes (ζωT ≈ 360: σ(f_n) ≈ 0.14 % of f_n and σ(ζ) ≈ 7 % of ζ
// against the limits' 1/6 % and 10 %) one at least must certify; at 4
// minutes (ζωT ≈ 90, σ(f_n) ≈ 0.2–0.3 %) none need.
func TestAmbientCameraFile(t *testing.T) {
	if testing.Short() {
		t.Skip("renders and reads a 20-minute clip")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	const duration = 1200.0
	mode := sim.Mode{Fn: 3, Zeta: 0.02, AmplitudePx: 0.5}
	clip := filepath.Join(t.TempDir(), "ambient.mp4")
	t0 := time.Now()
	if _, err := sim.WriteStructureVideo(ctx, clip, sim.Structure{W: 64, H: 64, Duration: duration, Seed: 2, Excitation: sim.ExcitationAmbient,
		Modes: []sim.Mode{mode}}, sim.Encoding{CRF: 23}); err != nil {
		t.Fatal(err)
	}
	t.Logf("rendered %.0f s in %v", duration, time.Since(t0).Round(time.Millisecond))
	for _, tc := range []struct {
		record      time.Duration
		mustCertify bool
	}{{16 * time.Minute, true}, {4 * time.Minute, false}} {
		t.Run(tc.record.String(), func(t *testing.T) {
			runAmbientFile(ctx, t, clip, duration, mode, tc.record, tc.mustCertify)
		})
	}
}

// runAmbientFile runs the daemon on the ambient clip of the given
// duration with the given record, and checks what it publishes (see
// TestAmbientCameraFile).
func runAmbientFile(ctx context.Context, t *testing.T, clip string, duration float64, mode sim.Mode, record time.Duration, mustCertify bool) {
	const hop = 30 * time.Second
	cam := config.DefaultCamera()
	cam.Name = "footbridge"
	cam.Source.Kind, cam.Source.Path, cam.Source.Realtime = config.KindFile, clip, false
	cam.Mode = config.ModeAmbient
	cam.Ambient = config.Ambient{Record: record, MaxLag: 20 * time.Second, Calibrate: 20 * time.Second}
	cam.Window = config.WindowOverride{Hop: hop}
	cfg := testConfig()
	cfg.Cameras = []config.Camera{cam}
	if mustCertify {
		// Alerts take an ambient estimate as any certified one: a baseline
		// of two records, then a drift of f_n beyond 0.01 % (one that
		// overlapping records of one steady mode still show: their f_n
		// wander by 0.01–0.05 %) in two in a row raises one.
		cfg.Alerts = config.Alerts{BaselineWindows: 2, FnDrift: 1e-4, Consecutive: 2}
	}
	t0 := time.Now()
	r := start(t, cfg, t.TempDir()) // stopped at the subtest's cleanup
	c := collect(t, r.d)
	// Offered when the record is first full and every hop after, to the
	// end of the file.
	want := int((duration-record.Seconds())/hop.Seconds()) + 1
	waitFor(t, 4*time.Minute, "a diagnostic of every record", func() bool {
		return ctx.Err() != nil || len(c.kind(wire.KindDiagnostic)) >= want
	})
	t.Logf("%d diagnostics in %v", want, time.Since(t0).Round(time.Millisecond))
	props, required := ambientSchema(t)
	judged := 0
	for _, m := range c.kind(wire.KindDiagnostic) {
		var d wire.Diagnostic
		if err := json.Unmarshal(m.Data, &d); err != nil {
			t.Fatal(err)
		}
		checkAmbientKeys(t, m.Data, props, required)
		span := d.WindowEnd.Sub(d.WindowStart)
		t.Logf("record %s–%s (%v, %d frames): %s γ0 %.4g ± %.2g γ1 %.4g ± %.2g, ambient %+v, amplitude %.3g px, %q",
			d.WindowStart.Format("15:04:05.0"), d.WindowEnd.Format("15:04:05.0"), span.Round(100*time.Millisecond), d.Frames, d.Verdict,
			valueOr(d.Gamma0), valueOr(d.Gamma0Sigma), valueOr(d.Gamma1), valueOr(d.Gamma1Sigma), d.Ambient, ampPx(d.Amplitude), d.Reasons)
		if d.Events != 1 || math.Abs(span.Seconds()-record.Seconds()) > 0.06*record.Seconds() {
			t.Errorf("diagnostic of %d events over %v, want 1 over the record (%v, less at most a twentieth)", d.Events, span, record)
		}
		if d.Verdict == "skipped" {
			continue
		}
		judged++
		if d.Ambient == nil {
			t.Errorf("an estimated record's diagnostic without its ambient facts: %s", m.Data)
			continue
		}
		if a := d.Ambient; a.Frames != d.Frames || math.Abs(a.Record-span.Seconds()) > 0.1 || a.Groups != 20 || a.Lags < 1 {
			t.Errorf("ambient %+v over %v and %d frames: want the record's length and frames and 20 groups", a, span, d.Frames)
		}
		if !d.Certified && len(d.Reasons) == 0 {
			t.Errorf("a record refused without reasons")
		}
	}
	if judged == 0 {
		t.Errorf("no record was estimated")
	}
	ests := estimates(t, c)
	for _, e := range ests {
		if e.Ambient == nil || e.Amplitude == nil || e.Events != 1 {
			t.Errorf("a certified ambient estimate without its ambient facts or amplitude, or of %d events", e.Events)
			continue
		}
		t.Logf("certified f_n %.5f ± %.5f Hz, ζ %.5f ± %.5f over %d frames (record %.1f s)", e.Fn, e.FnSigma, e.Zeta, e.ZetaSigma, e.Frames, e.Ambient.Record)
		if math.Abs(e.Fn-mode.Fn) > 3*e.FnSigma || math.Abs(e.Zeta-mode.Zeta) > 3*e.ZetaSigma {
			t.Errorf("certified f_n %.5f ± %.5f, ζ %.5f ± %.5f: more than 3σ from the truth (%g Hz, %g)", e.Fn, e.FnSigma, e.Zeta, e.ZetaSigma, mode.Fn, mode.Zeta)
		}
		// 0.5 px rms of the mode, a frame pixel a source pixel: √2·rms
		// read through x264 within a factor of two.
		if a := e.Amplitude; !(a.Px > 0.35 && a.Px < 1.5) || a.Readout != "flow" {
			t.Errorf("amplitude %+v: want √2 × 0.5 px within a factor of two, read by flow", a)
		}
	}
	if mustCertify && len(ests) == 0 {
		t.Errorf("no record certified")
	}
	if !mustCertify {
		return
	}
	raised := 0
	for _, m := range c.kind(wire.KindAlert) {
		var a wire.Alert
		if err := json.Unmarshal(m.Data, &a); err != nil {
			t.Fatal(err)
		}
		t.Logf("alert %s: %q", a.State, a.Reasons)
		if a.State == wire.AlertRaised && a.Camera == cam.Name && len(a.Reasons) > 0 {
			raised++
		}
	}
	if len(ests) >= 4 && raised == 0 {
		t.Errorf("%d certified ambient estimates raised no alert at a 0.01 %% drift limit", len(ests))
	}
}

func ampPx(a *wire.Amplitude) float64 {
	if a == nil {
		return math.NaN()
	}
	return a.Px
}

// ambientSchema returns the properties and required keys of the ambient
// object in docs/schema/estimate.v1.json.
func ambientSchema(t *testing.T) (props map[string]json.RawMessage, required []string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "docs", "schema", "estimate.v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Props map[string]json.RawMessage `json:"properties"`
		Defs  struct {
			Ambient struct {
				Required   []string                   `json:"required"`
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"ambient"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Props["ambient"]; !ok || len(s.Defs.Ambient.Properties) == 0 {
		t.Fatal("estimate.v1.json has no ambient property")
	}
	return s.Defs.Ambient.Properties, s.Defs.Ambient.Required
}

// checkAmbientKeys checks a message's ambient object, when it has one,
// against the schema's: every key it has is a property, every required
// key is there.
func checkAmbientKeys(t *testing.T, data []byte, props map[string]json.RawMessage, required []string) {
	t.Helper()
	var m struct {
		Ambient map[string]any `json:"ambient"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	if m.Ambient == nil {
		return
	}
	for k := range m.Ambient {
		if _, ok := props[k]; !ok {
			t.Errorf("ambient field %q is not in the schema", k)
		}
	}
	for _, k := range required {
		if _, ok := m.Ambient[k]; !ok {
			t.Errorf("ambient field %q, required by the schema, is missing", k)
		}
	}
}

// TestAmbientSchemaMessages: an estimate and a diagnostic with their
// ambient facts (a bend that was not measured, NaN, made 0) encode, match
// the schema's ambient object and the diagnostic schema's property, and
// the estimate decodes.
func TestAmbientSchemaMessages(t *testing.T) {
	props, required := ambientSchema(t)
	a := wire.NewAmbient(600, 18000, 107, 3.6, 20, 2.9, math.NaN(), 0.001)
	if a.Bend != 0 || a.BendSigma != 0 {
		t.Errorf("a NaN bend gave bend %v ± %v, want both 0", a.Bend, a.BendSigma)
	}
	if a.WithResolves(math.NaN()).ResolvesHz != 0 || a.WithResolves(-1).ResolvesHz != 0 {
		t.Errorf("a NaN or negative resolution gave resolves_hz %v, want 0 (absent)", a.ResolvesHz)
	}
	a.WithResolves(0.067)
	now := time.Now().UTC()
	e := wire.Estimate{Schema: wire.SchemaEstimate, Camera: "c", WindowStart: now.Add(-10 * time.Minute), WindowEnd: now, Frames: 18000, Events: 1,
		Regime: "underdamped", Certified: true, Ambient: a}
	b, err := json.Marshal(&e)
	if err != nil {
		t.Fatal(err)
	}
	checkAmbientKeys(t, b, props, required)
	if got, err := wire.DecodeEstimate(b); err != nil || got.Ambient == nil || *got.Ambient != *a {
		t.Errorf("decoded %+v, %v; want the ambient facts back", got, err)
	}
	bad := *a
	bad.Groups = 1
	e.Ambient = &bad
	if b, _ := json.Marshal(&e); func() error { _, err := wire.DecodeEstimate(b); return err }() == nil {
		t.Errorf("an ambient estimate of 1 group decoded")
	}
	bad = *a
	bad.ResolvesHz = -0.1
	e.Ambient = &bad
	if b, _ := json.Marshal(&e); func() error { _, err := wire.DecodeEstimate(b); return err }() == nil {
		t.Errorf("an ambient estimate resolving −0.1 Hz decoded")
	}
	e.Ambient = a
	raw, err := os.ReadFile(filepath.Join("..", "docs", "schema", "diagnostic.v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ds struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(raw, &ds); err != nil {
		t.Fatal(err)
	}
	d := wire.Diagnostic{Schema: wire.SchemaDiagnostic, Camera: "c", WindowStart: now, WindowEnd: now, Verdict: "not-certified", Ambient: a}
	b, err = json.Marshal(&d)
	if err != nil {
		t.Fatal(err)
	}
	var keys map[string]any
	_ = json.Unmarshal(b, &keys)
	for k := range keys {
		if _, ok := ds.Properties[k]; !ok {
			t.Errorf("diagnostic field %q is not in diagnostic.v1.json", k)
		}
	}
	checkAmbientKeys(t, b, props, required)
}

// ambientFrames renders n frames of a side×side sinusoidal grating
// shifted by z(k) px, at fps, from wall time t0.
func ambientFrames(side, n int, fps float64, t0 time.Time, z func(k int) float64) []frame.Frame {
	out := make([]frame.Frame, n)
	for k := range n {
		pix := make([]float64, side*side)
		for y := range side {
			for x := range side {
				pix[y*side+x] = 0.5 + 0.4*math.Sin(2*math.Pi*(float64(x)-z(k))/8)*math.Cos(2*math.Pi*float64(y)/16)
			}
		}
		d := time.Duration(float64(k) / fps * float64(time.Second))
		out[k] = frame.Frame{Seq: k, Time: d, Wall: t0.Add(d), W: side, H: side, SrcW: 64, SrcH: 64, Pix: pix}
	}
	return out
}

// TestAmbientFraming: the framing stage of an ambient line calibrates on
// the first seconds, offers its first record when it is full and then one
// every hop, each spanning its segments' frames (from the oldest held
// segment's first frame to the last), and a break adds a NaN that counts
// as a frame; a frame of another size calibrates again and starts over.
func TestAmbientFraming(t *testing.T) {
	const fps = 20.0
	opt := config.Ambient{Record: 60 * time.Second, MaxLag: 3 * time.Second, Calibrate: 5 * time.Second}
	log := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
	a := newAmbientFramer(log, opt, 10*time.Second, fps)
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	// A swing of a few tenths of a pixel at 1.3 and 0.7 Hz.
	z := func(k int) float64 {
		s := float64(k) / fps
		return 0.3*math.Sin(2*math.Pi*1.3*s) + 0.2*math.Sin(2*math.Pi*0.7*s+1)
	}
	frames := ambientFrames(16, 2000, fps, t0, z)
	var jobs []job
	var at []int
	for k, fr := range frames {
		if k == 1500 {
			a.breakStream()
		}
		if j, ok := a.push(fr); ok {
			jobs, at = append(jobs, j), append(at, k)
		}
	}
	if a.lin == nil || a.corr.Lags() != 61 || a.segLen != 60 || a.recordFrames != 1200 || a.hopFrames != 200 {
		t.Fatalf("readout %v, lags %d, segment %d, record %d, hop %d frames; want calibrated, 61, 60, 1200, 200",
			a.lin != nil, a.corr.Lags(), a.segLen, a.recordFrames, a.hopFrames)
	}
	// The calibration's frames (5 s and one) start the record: full at
	// frame 1199, then every 200 latents; the break's NaN is one more.
	// Each job's snapshot is checked after every frame was pushed: it is
	// the record's at its time, not the record's since.
	if want := []int{1199, 1399, 1598, 1798, 1998}; !slices.Equal(at, want) {
		t.Fatalf("jobs at frames %v, want %v", at, want)
	}
	for i, j := range jobs {
		k := at[i]
		pushed := k + 1
		if k >= 1500 {
			pushed++
		}
		held := (pushed-1)%60 + 1 + 19*60
		if pushed <= 1200 {
			held = pushed
		}
		first := pushed - held // the latent index the record starts at
		if k >= 1500 && first > 1500 {
			first-- // the NaN is latent 1500: frame indices behind it are one less
		}
		if j.ambient == nil || j.ambient.corr == nil || j.frames != held || j.ambient.corr.Frames() != held || j.events() != 1 ||
			!j.start.Equal(frames[first].Wall) || !j.end.Equal(frames[k].Wall) || j.ambient.frameW != 16 || j.srcW != 64 ||
			math.Abs(j.ambient.dt-1/fps) > 1e-12 {
			t.Errorf("job %d at frame %d: %d frames %v–%v, dt %v; want %d frames from frame %d", i, k, j.frames, j.start, j.end, j.ambient.dt, held, first)
		}
		if l := j.light(); l.ambient == nil || l.ambient.corr != nil || l.events() != 1 {
			t.Errorf("a skipped ambient job keeps %+v", l.ambient)
		}
	}
	// Another frame size: calibrated again, the record starts over.
	for _, fr := range ambientFrames(24, 120, fps, t0.Add(time.Hour), z) {
		if _, ok := a.push(fr); ok {
			t.Fatalf("a job from a record that started over")
		}
	}
	if a.lin == nil || a.lin.W != 24 || a.pushed != 120 {
		t.Errorf("after a size change: readout %v, %d latents; want recalibrated on 24×24 and 120 latents", a.lin != nil, a.pushed)
	}
}

// TestAmbientCalibrationFails: frames with nothing to read fail the
// readout's calibration; nothing is offered, it is tried again on the
// next seconds of frames (a break drops the frames gathered), and frames
// that can be read calibrate it.
func TestAmbientCalibrationFails(t *testing.T) {
	const fps = 20.0
	opt := config.Ambient{Record: 60 * time.Second, MaxLag: 3 * time.Second, Calibrate: 5 * time.Second}
	log := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
	a := newAmbientFramer(log, opt, 10*time.Second, fps)
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	flat := ambientFrames(16, 250, fps, t0, func(int) float64 { return 0 })
	for i := range flat {
		clear(flat[i].Pix)
	}
	for _, fr := range flat {
		if _, ok := a.push(fr); ok {
			t.Fatal("a job without a readout")
		}
	}
	if a.lin != nil || !a.warned || len(a.calib) != 250-2*101 {
		t.Fatalf("after two failed calibrations: readout %v, warned %v, %d frames held; want none, true, %d", a.lin != nil, a.warned, len(a.calib), 250-2*101)
	}
	// The source restarts (its times start again): the calibration too.
	a.breakStream()
	if len(a.calib) != 0 {
		t.Errorf("a break kept %d calibration frames", len(a.calib))
	}
	swing := ambientFrames(16, 150, fps, t0.Add(time.Minute), func(k int) float64 { return 0.3 * math.Sin(2*math.Pi*1.3*float64(k)/fps) })
	for _, fr := range swing {
		a.push(fr)
	}
	if a.lin == nil {
		t.Errorf("not calibrated on frames that move")
	}
}
