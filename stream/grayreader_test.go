package stream

import (
	"image"
	"math/rand/v2"
	"slices"
	"testing"
)

// A GrayReader gives ApplyGray's frames, bit for bit, over a sequence of
// pictures in one reused buffer (as a decoder hands them on), and a frame
// it returned is never changed by the next.
func TestGrayReaderMatchesApplyGray(t *testing.T) {
	for _, p := range []Preprocess{
		{ROI: ROI{X: 40, Y: 30, W: 209, H: 20}},           // no resize: frames cut from a block
		{ROI: ROI{X: 10, Y: 20, W: 120, H: 90}, Size: 48}, // shrinking resize
		{ROI: ROI{X: 5, Y: 5, W: 30, H: 20}, Size: 64},    // enlarging resize
		{Size: 32, Binarize: true},
		{ROI: ROI{X: 100, Y: 60, W: 64, H: 48}, Reference: ROI{X: 0, Y: 0, W: 32, H: 32}},
	} {
		r := NewGrayReader(p)
		rng := rand.New(rand.NewPCG(1, 2))
		img := image.NewGray(image.Rect(0, 0, 320, 240))
		var got, want []Frame
		for range 40 {
			for i := range img.Pix {
				img.Pix[i] = byte(rng.IntN(256))
			}
			g, err := r.Apply(img)
			if err != nil {
				t.Fatalf("%+v: %v", p, err)
			}
			w, err := p.ApplyGray(img)
			if err != nil {
				t.Fatalf("%+v: %v", p, err)
			}
			got, want = append(got, g), append(want, w)
		}
		for i := range got {
			g, w := got[i], want[i]
			if g.W != w.W || g.H != w.H || !slices.Equal(g.Pix, w.Pix) || !slices.Equal(g.Ref, w.Ref) {
				t.Fatalf("%+v: frame %d differs from ApplyGray's (%dx%d vs %dx%d)", p, i, g.W, g.H, w.W, w.H)
			}
		}
	}
}

// BenchmarkZoneCut reads one 640×480 picture's region as a zone does, with
// a reader's working memory and without it.
func BenchmarkZoneCut(b *testing.B) {
	p := Preprocess{ROI: ROI{X: 100, Y: 80, W: 320, H: 240}, Size: 64}
	img := image.NewGray(image.Rect(0, 0, 640, 480))
	for i := range img.Pix {
		img.Pix[i] = byte(i * 7)
	}
	b.Run("ApplyGray", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := p.ApplyGray(img); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("GrayReader", func(b *testing.B) {
		r := NewGrayReader(p)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := r.Apply(img); err != nil {
				b.Fatal(err)
			}
		}
	})
}
