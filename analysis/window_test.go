package analysis

import (
	"context"
	"errors"
	"image"
	"math"
	"testing"

	"github.com/physd/physd/estimator"
	"github.com/physd/physd/sim"
)

// pendulumClip is the underdamped pendulum at 32×32, 20 fps, as the
// estimator reads it (gray in [0, 1]).
func pendulumClip(t *testing.T, seconds float64) estimator.Clip {
	t.Helper()
	g1, g0 := sim.GroundTruth(sim.RegimeUnderdamped)
	fs, _, err := sim.Render(context.Background(), sim.Scene{System: sim.SystemPendulum, Gamma1: g1, Gamma0: g0, Z0: 50, Duration: seconds, FPS: 20, Size: 32, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	return clipOf(fs, 1.0/20)
}

func clipOf(fs []*image.Gray, dt float64) estimator.Clip {
	c := estimator.Clip{W: fs[0].Rect.Dx(), H: fs[0].Rect.Dy(), Dt: dt}
	for _, f := range fs {
		px := make([]float64, c.W*c.H)
		for i, v := range f.Pix {
			px[i] = float64(v) / 255
		}
		c.Frames = append(c.Frames, px)
	}
	return c
}

func copyClip(c estimator.Clip) estimator.Clip {
	out := c
	out.Frames = make([][]float64, len(c.Frames))
	for k, f := range c.Frames {
		out.Frames[k] = append([]float64(nil), f...)
	}
	return out
}

// The concurrent analysis (a one-shot command's) reports what the
// sequential one (the reports') does, to the bit: the same estimate, the
// same readout, the same verdict.
func TestConcurrentMatchesSequential(t *testing.T) {
	if testing.Short() {
		t.Skip("fits a window twice")
	}
	clip := pendulumClip(t, 6)
	p, err := estimator.LookupPreset("edge")
	if err != nil {
		t.Fatal(err)
	}
	p.Size, p.Steps = 32, 60
	run := func(concurrent bool) *Report {
		r, err := Window(context.Background(), []estimator.Clip{copyClip(clip)}, Options{Preset: p, Seed: 3, Concurrent: concurrent})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	seq, con := run(false), run(true)
	same := func(a, b float64) bool { return a == b || (math.IsNaN(a) && math.IsNaN(b)) }
	if !same(seq.Result.Gamma0, con.Result.Gamma0) || !same(seq.Result.Gamma1, con.Result.Gamma1) ||
		!same(seq.Result.Sigma0, con.Result.Sigma0) || !same(seq.Result.Sigma1, con.Result.Sigma1) {
		t.Errorf("sequential (%.17g, %.17g ± %g, %g), concurrent (%.17g, %.17g ± %g, %g)", seq.Result.Gamma0, seq.Result.Gamma1, seq.Result.Sigma0, seq.Result.Sigma1,
			con.Result.Gamma0, con.Result.Gamma1, con.Result.Sigma0, con.Result.Sigma1)
	}
	if seq.Verdict.Status != con.Verdict.Status || seq.Verdict.Readout != con.Verdict.Readout {
		t.Errorf("sequential %s (%s), concurrent %s (%s)", seq.Verdict.Status, seq.Verdict.Readout, con.Verdict.Status, con.Verdict.Readout)
	}
	if seq.Encoder == nil || !seq.Encoder.Cold || seq.Times.Train <= 0 {
		t.Errorf("the cold fit's record: %+v, times %+v", seq.Encoder, seq.Times)
	}
}

// A learner's window cannot be run beside the camera-motion test: its
// training would have to be undone when the motion is removed.
func TestConcurrentNeedsTheColdFit(t *testing.T) {
	fit := func(context.Context, []estimator.Clip, func(*estimator.Result) bool) (*estimator.Outcome, error) {
		t.Fatal("the learner ran")
		return nil, nil
	}
	_, err := Window(context.Background(), nil, Options{Fit: fit, Concurrent: true})
	if !errors.Is(err, ErrConcurrentLearner) {
		t.Fatalf("err = %v, want ErrConcurrentLearner", err)
	}
}

// The encoder's readout alone is certified when asked (EncoderOnly), and
// each estimate the learner asks about is judged once and reported with
// the verdict it got.
func TestLearnerAcceptsWhatIsCertified(t *testing.T) {
	if testing.Short() {
		t.Skip("fits a window")
	}
	clip := pendulumClip(t, 6)
	p, err := estimator.LookupPreset("edge")
	if err != nil {
		t.Fatal(err)
	}
	p.Size, p.Steps = 32, 60
	var asked []bool
	fit := func(ctx context.Context, clips []estimator.Clip, accept func(*estimator.Result) bool) (*estimator.Outcome, error) {
		r, err := estimator.Fit(ctx, clips, estimator.Options{Preset: p, Seed: 3})
		if err != nil {
			return nil, err
		}
		asked = append(asked, accept(r), accept(r))
		return &estimator.Outcome{Result: r}, nil
	}
	rep, err := Window(context.Background(), []estimator.Clip{clip}, Options{Preset: p, Fit: fit, EncoderOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(asked) != 2 || asked[0] != asked[1] || asked[0] != rep.Verdict.Certified {
		t.Errorf("accept answered %v; the verdict reported is certified=%v", asked, rep.Verdict.Certified)
	}
	if rep.Result != rep.Encoder.Result || rep.Verdict.Readout != "" && rep.Verdict.Readout != "encoder" {
		t.Errorf("EncoderOnly reported readout %q", rep.Verdict.Readout)
	}
}
