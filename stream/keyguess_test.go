package stream

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// guessRun feeds the guesser n pictures of w×h drawn by draw and returns
// the ones it guessed key frames.
func guessRun(n, w, h int, draw func(k int, pix []byte)) []int {
	var g keyGuesser
	var out []int
	pix := make([]byte, w*h)
	for k := range n {
		draw(k, pix)
		if g.observe(k, pix, w, h, w) {
			out = append(out, k)
		}
	}
	return out
}

// The guess marks a picture whose every block changed where the
// pictures before changed few, and a brightness step in a stream that
// changes every block each frame; not a moving object, however far it
// jumps, nor a noisy stream's ordinary frames, nor a picture before
// guessMinHistory frames or after a gap.
func TestKeyGuesser(t *testing.T) {
	const w, h = 128, 96
	bg := func(pix []byte, seed uint64, shift int) {
		r := rand.New(rand.NewPCG(seed, 1))
		for i := range pix {
			pix[i] = byte(min(255, max(0, 100+shift+r.IntN(40))))
		}
	}
	square := func(pix []byte, x0 int) {
		for y := 30; y < 60; y++ {
			for x := x0; x < x0+30 && x < w; x++ {
				pix[y*w+x] = 20
			}
		}
	}
	for _, c := range []struct {
		name string
		draw func(k int, pix []byte)
		want []int
	}{
		{"still, re-coded at 20 and 40", func(k int, pix []byte) {
			// The texture is re-drawn (new noise) at each "key frame".
			bg(pix, uint64(k/20), 0)
		}, []int{20, 40}},
		{"object moving, jumping at 25", func(k int, pix []byte) {
			bg(pix, 0, 0)
			x := 10 + k
			if k >= 25 {
				x += 40
			}
			square(pix, x%(w-30))
		}, nil},
		{"re-coded every 5, judged from the 9th", func(k int, pix []byte) { bg(pix, uint64(k/5), 0) }, []int{10, 15, 20, 25, 30, 35, 40, 45}},
		{"noisy stream, brightness step at 30", func(k int, pix []byte) {
			shift := 0
			if k >= 30 {
				shift = 6
			}
			bg(pix, uint64(k), shift)
		}, []int{30}},
		{"noisy stream", func(k int, pix []byte) { bg(pix, uint64(k), 0) }, nil},
	} {
		if got := guessRun(50, w, h, c.draw); !slices.Equal(got, c.want) {
			t.Errorf("%s: guessed %v, want %v", c.name, got, c.want)
		}
	}
	// A gap in Seq: the picture after it has no predecessor to differ
	// from, and the history starts again.
	var g keyGuesser
	pix := make([]byte, w*h)
	for k := range 20 {
		bg(pix, 0, 0)
		g.observe(k, pix, w, h, w)
	}
	bg(pix, 1, 0)
	if g.observe(25, pix, w, h, w) {
		t.Error("a picture after a gap in Seq was guessed a key frame")
	}
	if g.observe(26, pix[:10], w, h, w) {
		t.Error("a short picture was guessed a key frame")
	}
}
