package roi

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/physd/physd/stream"
)

// GridSize sets the search's grid: frames are area-resized to about
// GridSize² cells with their aspect ratio kept (stream.Preprocess with Size
// GridSize), so a cell is the mean of a block of source pixels (8×8 for
// 640×480, 26×26 for 1920×1080).
const GridSize = 64

// MaxSamples bounds the grid cells × frames a search holds (as float32: 64
// MiB for the residuals, as much again for the spectra). ScanFile stops
// reading a longer segment there and searches its first part.
const MaxSamples = 1 << 24

// DefaultSize is the output budget's side when Options.Size is 0: the
// preset's 64, so about 4096 pixels.
const DefaultSize = 64

// Errors wrapped by Find.
var (
	// ErrNoOscillation: nothing in the scene oscillates at one frequency,
	// persistently, in a connected region.
	ErrNoOscillation = errors.New("no oscillating region")
	// ErrInput: the clips cannot be searched (too short, sizes differ,
	// non-finite values).
	ErrInput = errors.New("invalid input")
)

// Tuning constants of the method (see the package documentation). They are
// derived from noise statistics, not from any clip.
const (
	minPeriods    = 3.0  // periods the window must hold at the lowest frequency searched
	scanFrac      = 0.6  // the scene's spectrum starts at this fraction of the lowest frequency
	maxFreqRate   = 0.4  // highest frequency searched, × the frame rate
	maxCands      = 8    // candidate frequencies evaluated
	harmonics     = 3    // f, 2f, 3f
	snrMin        = 10.0 // whitened peak a block needs at one harmonic (e⁻¹⁰ by chance)
	sceneFloor    = 10.0 // whitened level a block must exceed to count in the scene's spectrum
	strengthFrac  = 0.03 // excess power relative to the strongest block
	fundShareMin  = 0.2  // share of a cluster's power at f itself (else a subharmonic)
	joinCells     = 2    // blocks within this many cells join one cluster
	growHits      = 2    // sub-segments a cell next to the region needs to join it
	mergeFrac     = 0.25 // clusters with this share of the strongest one's power join the region
	maxViewShare  = 0.8  // a region of this share of the view's cells is the view changing, not an object
	padCells      = 1.5  // least padding of the box, in cells
	padFrac       = 0.1  // padding as a fraction of the box's longer side
	periodsPerSeg = 1.0  // least periods in a persistence sub-segment
	minSegs       = 3
	maxSegs       = 6
)

// Clip is one video's segment at the search's grid resolution.
type Clip struct {
	// W and H are the grid's size in cells.
	W, H int
	// Dt is the time between frames, seconds.
	Dt float64
	// Frames holds W·H gray levels per frame, row-major (any scale).
	Frames [][]float32
}

// Options configures Find.
type Options struct {
	// SrcW and SrcH are the source frame's size in pixels, the coordinates
	// of the Region returned; 0 means the grid's own.
	SrcW, SrcH int
	// Size is the side of the output's pixel budget (the preset's frame
	// size, about Size² pixels); 0 means DefaultSize.
	Size int
	// MinFreq and MaxFreq bound the frequencies searched, Hz; 0 means
	// three periods in the longest clip and 0.4 × the frame rate.
	MinFreq, MaxFreq float64
}

// Region is a rectangle in source pixels.
type Region struct {
	X int `json:"x"`
	Y int `json:"y"`
	W int `json:"w"`
	H int `json:"h"`
}

// String formats r as x,y,w,h: physd estimate's --roi syntax.
func (r Region) String() string { return fmt.Sprintf("%d,%d,%d,%d", r.X, r.Y, r.W, r.H) }

// Candidate is one frequency the search evaluated.
type Candidate struct {
	// FreqHz is the candidate frequency.
	FreqHz float64 `json:"freq_hz"`
	// Score is the excess power at f, 2f and 3f summed over the region's
	// cells, in gray levels² (0…255 scale) × cells: the variance the
	// oscillation adds to the block means, summed.
	Score float64 `json:"score"`
	// Region is the padded box of its cluster, when it has one.
	Region *Region `json:"region,omitempty"`
	// Cells is the number of grid cells in its cluster.
	Cells int `json:"cells"`
	// Persistence is the mean share of sub-segments in which the
	// cluster's cells oscillate at the frequency.
	Persistence float64 `json:"persistence"`
	// Rejected says why it was not chosen ("" for the chosen one).
	Rejected string `json:"rejected,omitempty"`
}

// Result is the region Find chose and how.
type Result struct {
	// Region is the crop, in source pixels.
	Region Region `json:"region"`
	// Active is the box of the oscillating cells before padding, in source
	// pixels: where the motion was seen.
	Active Region `json:"active"`
	// OutW and OutH are the output frame's size: Region's aspect ratio at
	// about Size² pixels, or Region's own size when that is smaller.
	OutW int `json:"out_w"`
	OutH int `json:"out_h"`
	// Size is the pixel budget's side the output was resized at, 0 when
	// the crop is used at its own size (see Preprocess).
	Size int `json:"size"`
	// ActiveOutPx is Active's longer side in output pixels: how many
	// pixels the motion spans in the frames the estimator sees.
	ActiveOutPx float64 `json:"active_out_px"`
	// FreqHz, Score, Cells and Persistence describe the chosen frequency
	// (see Candidate).
	FreqHz      float64 `json:"freq_hz"`
	Score       float64 `json:"score"`
	Cells       int     `json:"cells"`
	Persistence float64 `json:"persistence"`
	// SubSegments is the number of persistence sub-segments (all clips).
	SubSegments int `json:"sub_segments"`
	// GridW and GridH are the search grid's size; Frames the frames
	// searched (all clips).
	GridW  int `json:"grid_w"`
	GridH  int `json:"grid_h"`
	Frames int `json:"frames"`
	// Alternatives are the other candidates, best first, with why each
	// lost.
	Alternatives []Candidate `json:"alternatives,omitempty"`
	// LeadingS is the leading span of each clip, seconds, the region was
	// found in when the whole clips showed none (a decay that dies
	// early; see Find); 0 when it was found over their whole length.
	LeadingS float64 `json:"leading_s,omitempty"`
}

// Find searches clips (one or more videos of one camera, same grid) for the
// region that oscillates, and returns it with the output size for a budget
// of about opt.Size² pixels. The error wraps ErrNoOscillation when nothing
// qualifies, saying what the best candidate lacked, and ErrInput for clips
// that cannot be searched.
//
// A free decay that dies into the noise early in the clips fails the
// persistence test over their whole length, as a passer-by does (a 2.5 Hz
// swing at ζ 2 % is below the noise after a third of a 20 s clip). When
// nothing qualifies over the whole clips, the search is repeated on their
// leading half, quarter… while that lasts LeadingMin seconds: a decay is
// persistent over the span it lives in, a passer-by over none of them;
// Result.LeadingS tells which span found the region.
func Find(clips []Clip, opt Options) (Result, error) {
	res, err := find(clips, opt)
	if !errors.Is(err, ErrNoOscillation) {
		return res, err
	}
	for part := 2; ; part *= 2 {
		lead, secs := leading(clips, part)
		if lead == nil {
			return res, err
		}
		r, e := find(lead, opt)
		if e == nil {
			r.LeadingS = secs
			return r, nil
		}
		if !errors.Is(e, ErrNoOscillation) {
			return res, err
		}
	}
}

// LeadingMin is the shortest leading span of the clips, in seconds, Find
// searches a decay in.
const LeadingMin = 4.0

// leading is the first 1/part of every clip and its length in seconds
// (the longest clip's), or nil when a clip's part lasts less than
// LeadingMin.
func leading(clips []Clip, part int) ([]Clip, float64) {
	out := make([]Clip, len(clips))
	var secs float64
	for i, c := range clips {
		n := len(c.Frames) / part
		if float64(n)*c.Dt < LeadingMin {
			return nil, 0
		}
		out[i] = c
		out[i].Frames = c.Frames[:n]
		secs = max(secs, float64(n)*c.Dt)
	}
	return out, secs
}

// find is Find over the clips' whole length.
func find(clips []Clip, opt Options) (Result, error) {
	s, err := newSearch(clips, opt)
	if err != nil {
		return Result{}, err
	}
	cands := s.candidates()
	if len(cands) == 0 {
		return Result{}, fmt.Errorf("roi: %w: no spectral peak between %.3g and %.3g Hz stands out in any cell", ErrNoOscillation, s.fLo, s.fHi)
	}
	var evals []evaluation
	for _, f := range cands {
		evals = append(evals, s.evaluate(f))
	}
	sort.SliceStable(evals, func(i, j int) bool {
		if (evals[i].rejected == "") != (evals[j].rejected == "") {
			return evals[i].rejected == ""
		}
		return evals[i].score > evals[j].score
	})
	best := evals[0]
	if best.rejected != "" {
		return Result{}, fmt.Errorf("roi: %w: best candidate %.3g Hz: %s", ErrNoOscillation, best.freq, best.rejected)
	}
	res := s.result(best)
	for _, e := range evals[1:] {
		c := e.candidate(s)
		if c.Rejected == "" {
			c.Rejected = fmt.Sprintf("weaker: score %.3g < %.3g", e.score, best.score)
		}
		res.Alternatives = append(res.Alternatives, c)
	}
	res.Alternatives = append(res.Alternatives, best.others...)
	return res, nil
}

// search holds the preprocessed clips.
type search struct {
	gw, gh, nb int
	srcW, srcH int
	size       int
	fLo, fHi   float64
	// fScan is where the scene's spectrum starts, below fLo, so that a
	// spectrum that only falls with frequency (a slow transient: a
	// passer-by, a drift, a partial swing) has no peak at fLo.
	fScan  float64
	clips  []*clipData
	frames int
}

func newSearch(clips []Clip, opt Options) (*search, error) {
	if len(clips) == 0 {
		return nil, fmt.Errorf("roi: no clip: %w", ErrInput)
	}
	s := &search{gw: clips[0].W, gh: clips[0].H, srcW: opt.SrcW, srcH: opt.SrcH, size: opt.Size}
	if s.gw < 3 || s.gh < 3 {
		return nil, fmt.Errorf("roi: clip 0: grid %d×%d: want at least 3×3 cells: %w", s.gw, s.gh, ErrInput)
	}
	s.nb = s.gw * s.gh
	if s.srcW == 0 && s.srcH == 0 {
		s.srcW, s.srcH = s.gw, s.gh
	}
	if s.srcW < s.gw || s.srcH < s.gh {
		return nil, fmt.Errorf("roi: source %d×%d is smaller than the %d×%d grid: %w", s.srcW, s.srcH, s.gw, s.gh, ErrInput)
	}
	if s.size == 0 {
		s.size = DefaultSize
	}
	if s.size < 1 {
		return nil, fmt.Errorf("roi: option Size = %d: must be positive: %w", s.size, ErrInput)
	}
	if bad := func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) || v < 0 }; bad(opt.MinFreq) || bad(opt.MaxFreq) {
		return nil, fmt.Errorf("roi: options MinFreq = %v, MaxFreq = %v: want finite and ≥ 0: %w", opt.MinFreq, opt.MaxFreq, ErrInput)
	}
	longest, rate := 0.0, math.Inf(1)
	for i, c := range clips {
		if c.W != s.gw || c.H != s.gh {
			return nil, fmt.Errorf("roi: clip %d: grid %d×%d differs from clip 0's %d×%d: %w", i, c.W, c.H, s.gw, s.gh, ErrInput)
		}
		if !(c.Dt > 0) || math.IsInf(c.Dt, 0) {
			return nil, fmt.Errorf("roi: clip %d: Dt = %v: want a positive frame time: %w", i, c.Dt, ErrInput)
		}
		if len(c.Frames) < minFrames {
			return nil, fmt.Errorf("roi: clip %d: %d frames, need at least %d: %w", i, len(c.Frames), minFrames, ErrInput)
		}
		for t, f := range c.Frames {
			if len(f) != s.nb {
				return nil, fmt.Errorf("roi: clip %d: frame %d has %d cells, want %d: %w", i, t, len(f), s.nb, ErrInput)
			}
			for _, v := range f {
				if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
					return nil, fmt.Errorf("roi: clip %d: frame %d: non-finite level: %w", i, t, ErrInput)
				}
			}
		}
		longest = max(longest, float64(len(c.Frames))*c.Dt)
		rate = min(rate, 1/c.Dt)
		s.frames += len(c.Frames)
	}
	s.fLo, s.fHi = minPeriods/longest, maxFreqRate*rate
	if opt.MinFreq > 0 {
		s.fLo = max(s.fLo, opt.MinFreq)
	}
	if opt.MaxFreq > 0 {
		s.fHi = min(s.fHi, opt.MaxFreq)
	}
	if !(s.fLo < s.fHi) {
		return nil, fmt.Errorf("roi: no frequency to search: %.3g Hz (three periods in the %.3g s window) is not below %.3g Hz: %w", s.fLo, longest, s.fHi, ErrInput)
	}
	s.fScan = scanFrac * s.fLo
	for _, c := range clips {
		s.clips = append(s.clips, prepare(c, s.gw, s.gh, s.fScan, s.fHi))
	}
	return s, nil
}

// minFrames is the least number of frames a clip needs.
const minFrames = 16

// candidates returns the candidate frequencies: the highest local maxima
// of the scene's spectrum summed over clips, on the finest clip's grid.
func (s *search) candidates() []float64 {
	df := math.Inf(1)
	for _, c := range s.clips {
		df = min(df, c.df)
	}
	n := int(math.Floor((s.fHi-s.fScan)/df)) + 1
	if n < 1 {
		return nil
	}
	score := make([]float64, n)
	for _, c := range s.clips {
		sc := c.sceneScore()
		for j := range score {
			score[j] += c.at(sc, s.fScan+float64(j)*df)
		}
	}
	// Interior local maxima (a maximum at the edge of the scanned band is
	// not a peak). Their neighbourhood is one bin: a peak's flank can sit
	// on the rising side of a slow transient's spectrum.
	half := 1
	type peak struct {
		j int
		v float64
	}
	var peaks []peak
	for j, v := range score {
		if !(v > 0) || j-half < 0 || j+half > n-1 || s.fScan+float64(j)*df < s.fLo {
			continue
		}
		top := true
		for k := j - half; k <= j+half && top; k++ {
			top = score[k] < v || (score[k] == v && k >= j)
		}
		if top {
			peaks = append(peaks, peak{j, v})
		}
	}
	sort.Slice(peaks, func(a, b int) bool { return peaks[a].v > peaks[b].v })
	var out []float64
	for _, p := range peaks[:min(len(peaks), maxCands)] {
		f := s.fScan + float64(p.j)*df
		if p.j > 0 && p.j < n-1 { // parabolic refinement
			a, b, c := score[p.j-1], score[p.j], score[p.j+1]
			if d := a - 2*b + c; d < 0 {
				f += 0.5 * (a - c) / d * df
			}
		}
		out = append(out, f)
	}
	return out
}

// evaluation is one candidate frequency's outcome.
type evaluation struct {
	freq        float64
	score       float64
	cells       []int // the cluster's cells
	persistence float64
	segs        int
	rejected    string
	others      []Candidate // other clusters at this frequency
}

func (e evaluation) candidate(s *search) Candidate {
	c := Candidate{FreqHz: e.freq, Score: e.score, Cells: len(e.cells), Persistence: e.persistence, Rejected: e.rejected}
	if len(e.cells) > 0 {
		r, _ := s.box(e.cells)
		c.Region = &r
	}
	return c
}

// evaluate tests every cell at frequency f and clusters those that pass.
func (s *search) evaluate(f float64) evaluation {
	e := evaluation{freq: f}
	excess := make([]float64, s.nb)
	fund := make([]float64, s.nb)
	peak := make([]float64, s.nb)
	for _, c := range s.clips {
		c.harmonicPower(f, excess, fund, peak)
	}
	var segs []segment
	for i, c := range s.clips {
		segs = append(segs, c.segments(i, f)...)
	}
	e.segs = len(segs)
	if e.segs < minSegs {
		e.rejected = fmt.Sprintf("the window holds too few periods at %.3g Hz to test persistence (%d sub-segments, need %d)", f, e.segs, minSegs)
		return e
	}
	need := (2*e.segs + 2) / 3 // ⌈2K/3⌉
	// Sub-segment tests are the costly part: run them once per cell, only
	// for the cells that ask.
	acts := make([]*activity, s.nb)
	act := func(b int) activity {
		if acts[b] == nil {
			a := s.activity(segs, b)
			acts[b] = &a
		}
		return *acts[b]
	}
	var sig, pers int
	maxE := 0.0
	for b := range s.nb {
		if peak[b] >= snrMin {
			sig++
			if act(b).hits >= need {
				pers++
				maxE = max(maxE, excess[b])
			}
		}
	}
	if pers == 0 {
		if sig == 0 {
			e.rejected = fmt.Sprintf("no cell's peak at f, 2f or 3f stands %g× above its noise floor", snrMin)
		} else {
			e.rejected = fmt.Sprintf("%d cells oscillate at it, none persistently (in %d of %d sub-segments)", sig, need, e.segs)
		}
		return e
	}
	mask := make([]bool, s.nb)
	for b := range s.nb {
		mask[b] = peak[b] >= snrMin && excess[b] >= strengthFrac*maxE && act(b).hits >= need
	}
	// The mode's region: the strongest cluster and every cluster with at
	// least mergeFrac of its power (one mode seen on separate parts: a
	// spring, the mass it carries, the ball it drags through oil).
	clusters := s.clusters(mask, excess)
	var rest []cluster
	power, segPow := 0.0, 0.0
	for _, c := range clusters {
		if c.power < mergeFrac*clusters[0].power {
			rest = append(rest, c)
			continue
		}
		e.cells = append(e.cells, c.cells...)
		power += c.power
		for _, b := range c.cells {
			segPow = max(segPow, act(b).power)
		}
	}
	// Cells at the ends of a damped swing see the object only while the
	// amplitude is large, early in the window, too briefly for a spectral
	// peak over the whole window: they join the region when they touch it
	// and oscillate at f in a clip's first sub-segment or in growHits
	// sub-segments, as strongly as strengthFrac of the region's cells do,
	// within the region's box widened along its longer side (the swing's
	// direction) by that side on each end and along the other by half its
	// size (so that a hand releasing the object, busy in the first
	// sub-segment too, cannot carry the region away).
	x0, y0, x1, y1 := s.cellBox(e.cells)
	bw, bh := x1-x0+1, y1-y0+1
	ex, ey := bw/2, bh/2
	if bw*s.srcW*s.gh >= bh*s.srcH*s.gw { // wider than tall, in pixels
		ex = bw
	} else {
		ey = bh
	}
	gx0, gx1, gy0, gy1 := x0-ex, x1+ex, y0-ey, y1+ey
	grown := s.grow(e.cells, func(b int) bool {
		if x, y := b%s.gw, b/s.gw; x < gx0 || x > gx1 || y < gy0 || y > gy1 {
			return false
		}
		if mask[b] {
			return true
		}
		a := act(b)
		return (a.early || a.hits >= min(growHits, need)) && a.power >= strengthFrac*segPow
	})
	for _, b := range grown {
		power += excess[b]
	}
	e.cells = append(e.cells, grown...)
	e.score = power * 255 * 255
	var fsum, hsum float64
	for _, b := range e.cells {
		fsum += fund[b]
		hsum += excess[b]
		e.persistence += float64(act(b).hits) / float64(e.segs)
	}
	e.persistence /= float64(len(e.cells))
	switch {
	case hsum > 0 && fsum < fundShareMin*hsum:
		e.rejected = fmt.Sprintf("a subharmonic: its region holds %.0f%% of its power at %.3g Hz itself (need %.0f%%)", 100*fsum/hsum, f, 100*fundShareMin)
	case float64(len(e.cells)) >= maxViewShare*float64(s.nb):
		// An object moves in part of the view; the whole view changing
		// together is the light, the codec (texture drift over a GOP,
		// keyframe pumping: a 250-frame GOP's sawtooth has its harmonics
		// at 0.12, 0.24 … Hz) or the camera. The whole view is what no
		// region gives anyway.
		e.rejected = fmt.Sprintf("the whole view changes at it (%d of %d cells): the light, the codec's keyframes or the camera, not an object", len(e.cells), s.nb)
	}
	for _, c := range rest[:min(len(rest), 2)] {
		r, _ := s.box(c.cells)
		e.others = append(e.others, Candidate{FreqHz: f, Score: c.power * 255 * 255, Region: &r, Cells: len(c.cells),
			Rejected: fmt.Sprintf("another cluster at %.3g Hz, weaker: score %.3g < %.3g", f, c.power*255*255, e.score)})
	}
	return e
}

// grow returns the cells for which ok holds that are reached from cells
// through such cells, each step within joinCells (cells itself excluded;
// ok is asked once per cell at most).
func (s *search) grow(cells []int, ok func(int) bool) []int {
	in := make([]bool, s.nb)
	for _, b := range cells {
		in[b] = true
	}
	stack := slices.Clone(cells)
	var out []int
	for len(stack) > 0 {
		b := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		x, y := b%s.gw, b/s.gw
		for ny := max(0, y-joinCells); ny <= min(s.gh-1, y+joinCells); ny++ {
			for nx := max(0, x-joinCells); nx <= min(s.gw-1, x+joinCells); nx++ {
				n := ny*s.gw + nx
				if in[n] {
					continue
				}
				in[n] = true
				if ok(n) {
					out = append(out, n)
					stack = append(stack, n)
				}
			}
		}
	}
	return out
}

// cluster is a connected set of masked cells.
type cluster struct {
	cells []int
	power float64
}

// clusters groups masked cells within joinCells of each other, strongest
// (by summed power) first. mask must hold at least one cell.
func (s *search) clusters(mask []bool, power []float64) []cluster {
	label := make([]int, s.nb)
	for i := range label {
		label[i] = -1
	}
	var out []cluster
	for start := range s.nb {
		if !mask[start] || label[start] >= 0 {
			continue
		}
		id := len(out)
		c := cluster{}
		stack := []int{start}
		label[start] = id
		for len(stack) > 0 {
			b := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			c.cells = append(c.cells, b)
			c.power += power[b]
			x, y := b%s.gw, b/s.gw
			for dy := -joinCells; dy <= joinCells; dy++ {
				for dx := -joinCells; dx <= joinCells; dx++ {
					nx, ny := x+dx, y+dy
					if nx < 0 || ny < 0 || nx >= s.gw || ny >= s.gh {
						continue
					}
					n := ny*s.gw + nx
					if mask[n] && label[n] < 0 {
						label[n] = id
						stack = append(stack, n)
					}
				}
			}
		}
		out = append(out, c)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].power > out[j].power })
	return out
}

// cellBox is the grid box (inclusive) of cells, which must not be empty.
func (s *search) cellBox(cells []int) (x0, y0, x1, y1 int) {
	x0, y0, x1, y1 = s.gw, s.gh, -1, -1
	for _, b := range cells {
		x, y := b%s.gw, b/s.gw
		x0, y0, x1, y1 = min(x0, x), min(y0, y), max(x1, x), max(y1, y)
	}
	return x0, y0, x1, y1
}

// box returns the padded region of cells, clipped to the frame, and the
// unpadded one, in source pixels.
func (s *search) box(cells []int) (padded, active Region) {
	x0, y0, x1, y1 := s.cellBox(cells)
	sx, sy := float64(s.srcW)/float64(s.gw), float64(s.srcH)/float64(s.gh)
	ax0, ay0 := float64(x0)*sx, float64(y0)*sy
	ax1, ay1 := float64(x1+1)*sx, float64(y1+1)*sy
	active = s.clip(ax0, ay0, ax1, ay1)
	px := max(padFrac*(ax1-ax0), padCells*sx)
	py := max(padFrac*(ay1-ay0), padCells*sy)
	padded = s.clip(ax0-px, ay0-py, ax1+px, ay1+py)
	return padded, active
}

// clip rounds a box outward to whole pixels inside the frame.
func (s *search) clip(x0, y0, x1, y1 float64) Region {
	ix0, iy0 := max(0, int(math.Floor(x0))), max(0, int(math.Floor(y0)))
	ix1, iy1 := min(s.srcW, int(math.Ceil(x1))), min(s.srcH, int(math.Ceil(y1)))
	return Region{X: ix0, Y: iy0, W: max(1, ix1-ix0), H: max(1, iy1-iy0)}
}

// result builds the Result of the chosen evaluation.
func (s *search) result(e evaluation) Result {
	padded, active := s.box(e.cells)
	ow, oh, budget := outputSize(padded.W, padded.H, s.size)
	scale := float64(ow) / float64(padded.W)
	return Result{
		Region: padded, Active: active, OutW: ow, OutH: oh, Size: budget,
		ActiveOutPx: scale * float64(max(active.W, active.H)),
		FreqHz:      e.freq, Score: e.score, Cells: len(e.cells), Persistence: e.persistence,
		SubSegments: e.segs, GridW: s.gw, GridH: s.gh, Frames: s.frames,
	}
}

// outputSize is the frame size for a w×h crop with a budget of about
// size² pixels: the crop's own size when it holds no more (a small object
// is not enlarged: budget 0), else stream.Preprocess's aspect-keeping
// resize at Size = size.
func outputSize(w, h, size int) (ow, oh, budget int) {
	if w*h <= size*size {
		return w, h, 0
	}
	ow, oh = stream.Preprocess{Size: size}.OutputSize(w, h)
	return ow, oh, size
}

// Preprocess returns p with the region as its crop and the output size
// Find chose: Size for the budget, or Width×Height = the crop's own size
// when it is smaller than the budget.
func (r Result) Preprocess(p stream.Preprocess) stream.Preprocess {
	p.ROI = stream.ROI{X: r.Region.X, Y: r.Region.Y, W: r.Region.W, H: r.Region.H}
	p.Size, p.Width, p.Height = r.Size, 0, 0
	if r.Size == 0 {
		p.Width, p.Height = r.Region.W, r.Region.H
	}
	return p
}
