package estimator

import (
	"fmt"
	"math"
	"slices"

	"github.com/physd/physd/internal/order"
)

// Exposure is what NormalizeExposure found and did to a window.
type Exposure struct {
	// Applied reports that the frames were divided by their gains.
	Applied bool `json:"applied"`
	// Why says why not, when not applied.
	Why string `json:"why,omitempty"`
	// MinGain and MaxGain bound the per-frame gains g_k measured.
	MinGain float64 `json:"min_gain"`
	MaxGain float64 `json:"max_gain"`
	// Support is the share of the frame's pixels bright enough to measure
	// a gain on.
	Support float64 `json:"support"`
	// DarkFrames counts the frames dark where the scene is bright (gain
	// 0: the view went black — a lens cap, a dropped feed, a cut to black
	// in a recording): they show no object, and the certificate refuses
	// a window that holds one.
	DarkFrames int `json:"dark_frames,omitempty"`
}

// Photometric normalisation's settings.
const (
	// exposureFloor is the gray level (of 1) below which a pixel says
	// nothing about gain: a dark pixel's ratio is noise.
	exposureFloor = 0.1
	// exposureSupport is the share of the frame that must be bright
	// enough to measure a gain on. An exposure change scales the whole
	// scene; a bright object on a dark background whose brightness is
	// the state (the paper's intensity system) covers less than this, and
	// normalising it would erase the signal.
	exposureSupport = 0.5
	// exposureMinChange is the smallest gain change worth undoing; below
	// it the frames are left exactly as they came.
	exposureMinChange = 0.005
	// refBlock is how many pixels' columns the reference gathers at once.
	refBlock = 16
)

// NormalizeExposure undoes per-frame changes of exposure or gain (a
// camera's automatic exposure, a cloud, a shadow across the scene): the
// latent must follow the object, not the light. A gain change multiplies
// every pixel of frame k by the same g_k, so g_k is read as the median
// over pixels of the ratio to the window's median frame r,
//
//	g_k = median_{x: r(x) ≥ floor} I_k(x) / r(x),
//
// which the object's own pixels (a minority of a region drawn around its
// path) cannot move, and the frames become I_k / g_k. It returns new clips
// with new frames when the gains change by more than exposureMinChange and
// the bright pixels cover at least exposureSupport of the frame; otherwise
// it returns clips itself, so scenes without exposure changes keep their
// exact pixels. The frames of all clips share one reference: one camera.
func NormalizeExposure(clips []Clip) ([]Clip, Exposure) {
	if len(clips) == 0 || len(clips[0].Frames) == 0 {
		return clips, Exposure{Why: "no frames"}
	}
	p := len(clips[0].Frames[0])
	var frames [][]float64
	for _, c := range clips {
		frames = append(frames, c.Frames...)
	}
	n := len(frames)
	// The reference is the median frame over (at most 64 of) the frames.
	// Its pixels' columns are gathered refBlock pixels at a time: one
	// pixel per frame would read a cache line of every frame for each
	// pixel.
	stride := (n + 63) / 64
	m := (n + stride - 1) / stride
	cols := make([]float64, refBlock*m)
	ref := make([]float64, p)
	var idx []int
	for j0 := 0; j0 < p; j0 += refBlock {
		b := min(refBlock, p-j0)
		for c, i := 0, 0; i < n; c, i = c+1, i+stride {
			for q, v := range frames[i][j0 : j0+b] {
				cols[q*m+c] = v
			}
		}
		for q := range b {
			j := j0 + q
			ref[j] = order.Select(cols[q*m:(q+1)*m], m/2)
			if ref[j] >= exposureFloor {
				idx = append(idx, j)
			}
		}
	}
	e := Exposure{Support: float64(len(idx)) / float64(p), MinGain: 1, MaxGain: 1}
	if e.Support < exposureSupport {
		e.Why = "too little of the frame is bright enough to measure a gain on"
		return clips, e
	}
	gains := make([]float64, n)
	ratio := make([]float64, len(idx))
	e.MinGain, e.MaxGain = math.Inf(1), math.Inf(-1)
	for i, f := range frames {
		for q, j := range idx {
			ratio[q] = f[j] / ref[j]
		}
		g := order.Select(ratio, len(ratio)/2)
		if !(g > 0) {
			e.DarkFrames++
			continue
		}
		gains[i] = g
		e.MinGain, e.MaxGain = min(e.MinGain, g), max(e.MaxGain, g)
	}
	if e.DarkFrames > 0 {
		e.Why = fmt.Sprintf("%d frame(s) dark where the scene is bright", e.DarkFrames)
		if math.IsInf(e.MinGain, 0) {
			e.MinGain, e.MaxGain = 0, 0
		}
		return clips, e
	}
	if e.MaxGain-e.MinGain <= exposureMinChange {
		e.Why = "the exposure does not change"
		return clips, e
	}
	// New frames, not writes into the caller's: they may be shared. They
	// are cut from one block: they die together, and a frame just over
	// the allocator's largest size class (32 KB) alone would take whole
	// pages.
	out := slices.Clone(clips)
	block := make([]float64, n*p)
	i := 0
	for m := range out {
		fs := make([][]float64, len(clips[m].Frames))
		for k, f := range clips[m].Frames {
			g := block[i*p : (i+1)*p : (i+1)*p]
			inv := 1 / gains[i]
			for j, v := range f {
				g[j] = v * inv
			}
			fs[k] = g
			i++
		}
		out[m].Frames = fs
	}
	e.Applied = true
	return out, e
}

// Normalized is a set of clips' exposure normalisation (NormalizeExposure)
// made once for several uses (Options.Normalized).
type Normalized struct {
	Clips    []Clip
	Exposure Exposure
}

// NormalizeClips validates clips as Fit does and normalises their
// exposure (NormalizeExposure), or returns Fit's error for clips it would
// refuse: NormalizeExposure itself expects valid clips.
func NormalizeClips(clips []Clip) (*Normalized, error) {
	if err := validateClips(clips); err != nil {
		return nil, fmt.Errorf("fit: %w", err)
	}
	c, e := NormalizeExposure(clips)
	return &Normalized{Clips: c, Exposure: e}, nil
}
