package estimator

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"time"

	"github.com/physd/physd/estimator/nn"
)

// LearnerOptions configure online fine-tuning.
type LearnerOptions struct {
	// Preset is the recipe; its Steps are the steps of a cold start.
	Preset Preset
	// Steps is the number of warm training steps per window.
	Steps int
	// Budget caps each window's training time (0: no cap).
	Budget time.Duration
	// Replay is how many recent windows join each window's training.
	Replay int
	// Seed fixes the random choices of cold starts.
	Seed uint64
	// Screen, when set, is each window estimate's Options.Screen: σ is
	// measured only for estimates it passes.
	Screen func(*Result) bool
	// Lazy trains the warm encoder only when it helps (see warmPolicy):
	// a settled encoder is fitted as it stands and trained every few
	// windows or when refused; on a scene that keeps refusing it,
	// training is held back like the cold starts. Without it every
	// window is trained.
	Lazy bool
}

// Learner keeps one camera's encoder from window to window: each window
// re-projects the readout from the previous window's γ, trains a bounded
// number of steps of the layers after the spatial features (which a cold
// start learned), warm-started, on the window plus a few recent ones, and
// is then estimated on its own frames. When the warm
// encoder's estimate is not accepted (it was born on a window that did
// not show the motion well, or the scene changed) a cold start on the
// window gets a chance, and replaces the encoder if it is accepted. On a
// scene that refuses the cold starts too (nothing certifiable in view),
// they are held back: after two refused in a row, 1, 2, 4, … and then
// at most 64 windows pass between tries, until a window is certified or its
// motion energy (mean per-pixel temporal variance) moves by more than 2×
// outside the range of the refused ones'; after a certified window the
// count resumes where it stood if the next refusal's energy lies in that
// range (coldBackoff). With LearnerOptions.Lazy the warm training
// itself is spared when it cannot help (warmPolicy).
type Learner struct {
	opt     LearnerOptions
	enc     network
	w, h    int
	version int
	steps   int64
	replay  [][]Clip
	// gamma is the last accepted window's stencil (γ1, γ0), the start of
	// the next window's readout re-projection.
	gamma *[2]float64
	// cold holds back cold starts on a scene that keeps refusing them.
	cold coldBackoff
	// warm decides when warm training can wait (LearnerOptions.Lazy).
	warm warmPolicy
}

// Outcome is one window's estimate and what training it took.
type Outcome struct {
	*Result
	// Cold is set when the estimate came from a fresh encoder (first
	// window, or a re-initialisation); ColdTried when a cold start ran
	// on this window, kept or not; ColdHeld when the warm estimate was
	// refused and the cold start held back (the scene refused the last
	// ones and has not changed; see the learner's doc).
	Cold, ColdTried, ColdHeld bool
	// FitOnly is set when the estimate came from the warm encoder as it
	// stood, without training on this window; TrainHeld when the window
	// was not trained because the scene keeps refusing the warm encoder
	// (LearnerOptions.Lazy).
	FitOnly, TrainHeld bool
	// TrainSteps and TrainTime are the training spent on this window,
	// including a rejected attempt.
	TrainSteps int
	TrainTime  time.Duration
	// FitTime is the part of TrainTime spent in the warm encoder's
	// estimate fits on the window's own frames (σ included); the rest is
	// training, cold starts and the accept calls.
	FitTime time.Duration
	// RolledBack is set when warm training on this window was undone
	// (it diverged or its estimate was not accepted); Diverged when its
	// loss became NaN or infinite.
	RolledBack, Diverged bool
}

// NewLearner returns a learner with no encoder yet.
func NewLearner(opt LearnerOptions) (*Learner, error) {
	if err := opt.Preset.Validate(); err != nil {
		return nil, err
	}
	if opt.Steps < 0 || opt.Replay < 0 {
		return nil, fmt.Errorf("learner: steps %d and replay %d must be ≥ 0", opt.Steps, opt.Replay)
	}
	return &Learner{opt: opt}, nil
}

// Version counts the encoders this learner has started from scratch; it
// changes whenever the encoder is re-initialised.
func (l *Learner) Version() int { return l.version }

// TotalSteps is the number of training steps the current lineage of
// encoders has taken, across restarts when restored from a checkpoint.
func (l *Learner) TotalSteps() int64 { return l.steps }

// Ready reports whether the learner has an encoder.
func (l *Learner) Ready() bool { return l.enc != nil }

// Window estimates (γ1, γ0) from one window's clips (one clip, or several
// events of a multi-trajectory window). accept decides whether an estimate
// is good enough to keep the encoder that produced it (typically: it was
// certified). The attempts, in turn until one ends the window: the warm
// encoder as it stands (Lazy), trained on the window, the cold start held
// back, a cold start.
func (l *Learner) Window(ctx context.Context, clips []Clip, accept func(*Result) bool) (*Outcome, error) {
	if len(clips) == 0 {
		return nil, fmt.Errorf("learner: %w", ErrNoClips)
	}
	w := &learnerWindow{clips: clips, accept: accept, start: time.Now(), out: &Outcome{}}
	if l.enc != nil && (clips[0].W != l.w || clips[0].H != l.h) {
		l.enc = nil // the frame size changed: the encoder no longer applies
		l.replay = nil
	}
	w.energy = motionEnergy(clips)
	// Cheapest first; the cold start always ends the window.
	for _, try := range []func(context.Context, *learnerWindow) (bool, error){
		l.fitAsItStands, l.trainWarm, l.holdCold, l.startCold,
	} {
		done, err := try(ctx, w)
		if err != nil {
			return nil, err
		}
		if done {
			break
		}
	}
	return w.out, nil
}

// paramSnapshot is a copy of an encoder's weights.
type paramSnapshot [][]float64

func snapshotParams(e Encoder) paramSnapshot {
	var s paramSnapshot
	for _, p := range e.Params() {
		s = append(s, append([]float64(nil), data(p)...))
	}
	return s
}

// restore writes the snapshot back into e, which must be the encoder it
// was taken from.
func (s paramSnapshot) restore(e Encoder) {
	for i, p := range e.Params() {
		copy(data(p), s[i])
	}
}

// ErrNoClips reports a window with nothing in it.
var ErrNoClips = errors.New("no clips")

func (l *Learner) remember(r *Result, clips []Clip) {
	if r.Stencil != nil {
		l.gamma = &[2]float64{r.Stencil.Gamma1, r.Stencil.Gamma0}
	}
	if l.opt.Replay == 0 {
		return
	}
	l.replay = append(l.replay, clips)
	if len(l.replay) > l.opt.Replay {
		l.replay = l.replay[len(l.replay)-l.opt.Replay:]
	}
}

// replayLike is the replay's clips of c's frame size and time step: a
// camera whose rate changed (a stream renegotiated, frames binned anew)
// trains on its new windows alone until the replay holds them, where the
// old ones would make the training's fit refuse the mixed steps.
func (l *Learner) replayLike(c Clip) []Clip {
	var out []Clip
	for _, cs := range l.replay {
		for _, r := range cs {
			if r.W == c.W && r.H == c.H && math.Abs(r.Dt-c.Dt) <= 1e-9*c.Dt {
				out = append(out, r)
			}
		}
	}
	return out
}

// checkpointHeader is the first line of a learner checkpoint.
type checkpointHeader struct {
	Format  string `json:"format"`
	Preset  string `json:"preset"`
	W       int    `json:"w"`
	H       int    `json:"h"`
	Version int    `json:"encoder_version"`
	Steps   int64  `json:"steps"`
	// Gamma is the last accepted window's stencil (γ1, γ0), if any.
	Gamma *[2]float64 `json:"stencil_gamma,omitempty"`
}

const checkpointFormat = "physd-learner/1"

// ErrCheckpointMismatch reports a checkpoint made for another preset or
// frame size; it is not an error in the file.
var ErrCheckpointMismatch = errors.New("checkpoint does not match the configuration")

// ErrCheckpointCorrupt is in the chain of Learner.Load's error when the
// checkpoint itself is damaged (truncated, a bad checksum, a bad shape),
// as opposed to written for another configuration: it is the encoder
// package's nn.ErrCheckpoint, so that callers need not know that package.
var ErrCheckpointCorrupt = nn.ErrCheckpoint

// Save writes the encoder (a JSON header line, then the weights in the nn
// checkpoint format with its checksum). It fails if there is no encoder
// or the encoder is not the low-rank one.
func (l *Learner) Save(w io.Writer) error {
	e, ok := l.enc.(*LowRank)
	if !ok {
		return fmt.Errorf("learner: save: encoder %T cannot be checkpointed", l.enc)
	}
	h := checkpointHeader{Format: checkpointFormat, Preset: l.opt.Preset.Name, W: l.w, H: l.h, Version: l.version, Steps: l.steps, Gamma: l.gamma}
	b, err := json.Marshal(h)
	if err != nil {
		return fmt.Errorf("learner: save: %w", err)
	}
	if _, err := w.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("learner: save: %w", err)
	}
	if err := nn.SaveParams(w, e.Params(), map[string][]float64{"mean": e.Mean}); err != nil {
		return fmt.Errorf("learner: save: %w", err)
	}
	return nil
}

// Load restores an encoder saved by Save. A corrupt or truncated file is
// an error wrapping nn.ErrCheckpoint; one made for another preset or frame
// size wraps ErrCheckpointMismatch. On error the learner is unchanged.
func (l *Learner) Load(r io.Reader) error {
	br := bufio.NewReader(r)
	line, err := br.ReadBytes('\n')
	if err != nil {
		return fmt.Errorf("learner: load: header: %w", nn.ErrCheckpoint)
	}
	var h checkpointHeader
	if err := json.Unmarshal(line, &h); err != nil || h.Format != checkpointFormat {
		return fmt.Errorf("learner: load: header is not %s: %w", checkpointFormat, nn.ErrCheckpoint)
	}
	p := l.opt.Preset
	if h.Preset != p.Name || p.Encoder != "lowrank" || h.W < 1 || h.H < 1 || h.W*h.H > 1<<24 {
		return fmt.Errorf("learner: load: checkpoint for preset %q at %d×%d: %w", h.Preset, h.W, h.H, ErrCheckpointMismatch)
	}
	e := NewLowRank(rand.New(rand.NewPCG(0, 0)), h.W*h.H, p.Features, p.Hidden)
	extra, err := nn.LoadCheckpoint(br, e.Params())
	if err != nil {
		return fmt.Errorf("learner: load: %w", err)
	}
	mean, ok := extra["mean"]
	if !ok || len(mean) != h.W*h.H {
		return fmt.Errorf("learner: load: mean frame missing or of the wrong size: %w", nn.ErrCheckpoint)
	}
	copy(e.Mean, mean)
	e.EnableFeatureCache()
	l.enc, l.w, l.h, l.version, l.steps, l.replay, l.gamma = e, h.W, h.H, h.Version, h.Steps, nil, h.Gamma
	l.warm.reset()
	return nil
}
