package window

import (
	"math"
	"testing"
	"time"

	"github.com/physd/physd/frame"
)

// binFrame is frame seq of a 2-pixel camera at 30 fps whose first pixel
// is z and second 1 − z.
func binFrame(seq int, z float64) frame.Frame {
	t := time.Duration(seq) * time.Second / 30
	return frame.Frame{Seq: seq, Time: t, Wall: time.Unix(1000, 0).Add(t), W: 2, H: 1, Pix: []float64{z, 1 - z}, KeyKnown: true}
}

// Binned samples of a free response are a free response of the same ODE:
// they follow the exact two-step recursion of (γ1, γ0) at the binned step,
// z_{k+1} = 2e^{−ah}cos(ω_d h) z_k − e^{−2ah} z_{k−1}, a = γ1/2, to
// rounding, for bins of 2, 3 and 5 frames.
func TestBinKeepsTheODE(t *testing.T) {
	const g1, g0, dt = 0.3, 40.0, 1.0 / 30
	a := g1 / 2
	wd := math.Sqrt(g0 - a*a)
	z := func(t float64) float64 { return math.Exp(-a*t) * (0.7*math.Cos(wd*t) + 0.2*math.Sin(wd*t)) }
	for _, n := range []int{2, 3, 5} {
		b := NewBinner(n)
		var out []float64
		var times []time.Duration
		for k := range 300 {
			if f, ok := b.Push(binFrame(k, z(float64(k)*dt))); ok {
				out = append(out, f.Pix[0])
				times = append(times, f.Time)
				if f.Seq != len(out)-1 {
					t.Fatalf("n=%d: bin %d has seq %d", n, len(out)-1, f.Seq)
				}
				if math.Abs(f.Pix[0]+f.Pix[1]-1) > 1e-15 {
					t.Fatalf("n=%d: pixels %v do not average as the frames'", n, f.Pix)
				}
			}
		}
		// The first bin needs 2n−1 frames, each next one n more.
		if want := 1 + (300-(2*n-1))/n; len(out) != want {
			t.Fatalf("n=%d: %d bins from 300 frames, want %d", n, len(out), want)
		}
		h := float64(n) * dt
		c1, c2 := 2*math.Exp(-a*h)*math.Cos(wd*h), -math.Exp(-2*a*h)
		var worst float64
		for k := 1; k+1 < len(out); k++ {
			worst = math.Max(worst, math.Abs(out[k+1]-c1*out[k]-c2*out[k-1]))
		}
		if worst > 1e-12 {
			t.Errorf("n=%d: binned samples miss the ODE's recursion by %g", n, worst)
		}
		// A bin's time is its centre frame's: evenly spaced by nΔt.
		want := time.Duration(n-1) * time.Second / 30
		if d := times[0] - want; d < -time.Microsecond || d > time.Microsecond {
			t.Errorf("n=%d: first bin at %v, want %v", n, times[0], want)
		}
		if d := times[1] - times[0] - time.Duration(n)*time.Second/30; d < -time.Microsecond || d > time.Microsecond {
			t.Errorf("n=%d: bins %v apart", n, times[1]-times[0])
		}
	}
}

// A dropped input frame drops the partial bin and shows as a jump in the
// bins' Seq, which the Slicer breaks its windows at; a key frame marks
// its bin.
func TestBinBreaks(t *testing.T) {
	b := NewBinner(2)
	var seqs []int
	var keys []bool
	push := func(f frame.Frame) {
		if o, ok := b.Push(f); ok {
			seqs, keys = append(seqs, o.Seq), append(keys, o.Key)
		}
	}
	for k := range 5 {
		push(binFrame(k, 0.5)) // bins centred on frames 1 and 3
	}
	// Frame 5 is lost: frame 4, gathered for the next bin, is dropped.
	for k := 6; k < 12; k++ {
		f := binFrame(k, 0.5)
		f.Key = k == 10
		push(f) // bins centred on 7 and 9 (8–10 holds the key frame)
	}
	if want := []int{0, 1, 3, 4}; len(seqs) != len(want) || seqs[0] != 0 || seqs[1] != 1 || seqs[2] != 3 || seqs[3] != 4 {
		t.Errorf("bin seqs %v, want %v", seqs, want)
	}
	if b.Dropped != 1 {
		t.Errorf("dropped %d input frames, want 1", b.Dropped)
	}
	if len(keys) != 4 || keys[2] || !keys[3] {
		t.Errorf("key bins %v, want only the last", keys)
	}
	// The Slicer sees the jump as a break.
	s, err := NewSlicer(SlicerOptions{Length: 2 * time.Second, Hop: time.Second, FPS: 15})
	if err != nil {
		t.Fatal(err)
	}
	b = NewBinner(2)
	breaks := 0
	for k := range 40 {
		if k == 21 {
			continue
		}
		if o, ok := b.Push(binFrame(k, 0.5)); ok {
			if _, brk := s.Push(o); brk != nil {
				breaks++
			}
		}
	}
	if breaks != 1 {
		t.Errorf("%d breaks at a dropped frame, want 1", breaks)
	}
}

// Motion that decimation would fold into the band physd fits at the
// binned step — within fps/(8N) of the bins' rate fps/N — comes out of
// the Binner at most 28 dB down for N = 2 and 31 dB for N = 3 (a mean of
// N frames would pass 0.16–0.20 of it); a slow mode, at sixteen bins a
// period, keeps more than 0.98 of its amplitude.
func TestBinFoldsLittle(t *testing.T) {
	const fps = 30.0
	gain := func(n int, f float64) float64 {
		// Amplitude out over amplitude in, from the bins' projection on
		// the folded frequency's cosine and sine over many periods.
		b := NewBinner(n)
		var c, s, cc, ss float64
		for k := range 6000 {
			o, ok := b.Push(binFrame(k, math.Cos(2*math.Pi*f*float64(k)/fps)))
			if !ok {
				continue
			}
			ph := 2 * math.Pi * f * o.Time.Seconds()
			c += o.Pix[0] * math.Cos(ph)
			s += o.Pix[0] * math.Sin(ph)
			cc += math.Cos(ph) * math.Cos(ph)
			ss += math.Sin(ph) * math.Sin(ph)
		}
		return math.Hypot(c/cc, s/ss)
	}
	for _, tc := range []struct {
		n     int
		worst float64 // 10^(−dB/20)
	}{{2, 0.0381}, {3, 0.0259}} {
		for _, df := range []float64{-1, -0.5, 0, 0.5, 1} {
			f := fps/float64(tc.n) + df*fps/float64(8*tc.n)
			if g := gain(tc.n, f); g > tc.worst*1.01 {
				t.Errorf("n=%d: %.3f Hz passes %.4f of its amplitude, want ≤ %.4f", tc.n, f, g, tc.worst)
			}
		}
		f := fps / float64(16*tc.n)
		if g := gain(tc.n, f); g < 0.98 || g > 1 {
			t.Errorf("n=%d: the mode at %.3f Hz keeps %.4f of its amplitude, want 0.98–1", tc.n, f, g)
		}
	}
}

// One frame a bin passes frames through untouched.
func TestBinOne(t *testing.T) {
	b := NewBinner(1)
	f := binFrame(7, 0.25)
	o, ok := b.Push(f)
	if !ok || o.Seq != 7 || &o.Pix[0] != &f.Pix[0] {
		t.Errorf("bin of one changed the frame: %+v", o)
	}
}
