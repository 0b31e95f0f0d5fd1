package stream

import (
	"errors"
	"image"
	"sync"
	"testing"
	"time"
)

// gradient is a w×h gray image whose level is (x+y) mod 256, with a
// bounds offset and a stride wider than the image.
func gradient(w, h int) *image.Gray {
	big := image.NewGray(image.Rect(0, 0, w+7, h+3))
	for y := range h + 3 {
		for x := range w + 7 {
			big.Pix[y*big.Stride+x] = uint8((x - 5 + y - 2) & 255)
		}
	}
	return big.SubImage(image.Rect(5, 2, 5+w, 2+h)).(*image.Gray)
}

// TestThumbnailerApplyGray: the thumbnail is the whole frame before the
// crop, shrunk to MaxSide with its aspect ratio, at most one per Interval;
// the preprocessed frame is exactly what it is without a thumbnailer.
func TestThumbnailerApplyGray(t *testing.T) {
	img := gradient(640, 480)
	th := &Thumbnailer{Interval: time.Hour}
	with := Preprocess{ROI: ROI{X: 10, Y: 20, W: 200, H: 200}, Size: 64, Thumb: th}
	without := with
	without.Thumb = nil
	if _, ok := th.Latest(); ok {
		t.Fatal("a thumbnail before any frame")
	}
	f1, err := with.ApplyGray(img)
	if err != nil {
		t.Fatal(err)
	}
	f0, err := without.ApplyGray(img)
	if err != nil {
		t.Fatal(err)
	}
	for i := range f0.Pix {
		if f0.Pix[i] != f1.Pix[i] {
			t.Fatalf("the thumbnailer changed pixel %d: %v vs %v", i, f1.Pix[i], f0.Pix[i])
		}
	}
	got, ok := th.Latest()
	if !ok || got.W != DefaultThumbSide || got.H != 120 || got.SrcW != 640 || got.SrcH != 480 || len(got.Pix) != got.W*got.H {
		t.Fatalf("thumbnail %d×%d of %d×%d (%d pixels)", got.W, got.H, got.SrcW, got.SrcH, len(got.Pix))
	}
	// Each thumbnail pixel is the mean of a 4×4 block of the gradient:
	// level (4x+1.5)+(4y+1.5) = 4(x+y)+3, where nothing wraps.
	for _, p := range [][2]int{{0, 0}, {10, 5}, {30, 20}} {
		want := 4*(p[0]+p[1]) + 3
		if v := int(got.Pix[p[1]*got.W+p[0]]); v < want-1 || v > want+1 {
			t.Errorf("thumbnail (%d, %d) = %d, want %d±1", p[0], p[1], v, want)
		}
	}
	// Within the interval the thumbnail is kept.
	if _, err := with.ApplyGray(gradient(320, 240)); err != nil {
		t.Fatal(err)
	}
	if again, _ := th.Latest(); again.SrcW != 640 || !again.Taken.Equal(got.Taken) {
		t.Errorf("a second thumbnail within the interval: %d px wide", again.SrcW)
	}
	th.Interval = time.Nanosecond
	th.mu.Lock()
	th.next = time.Time{}
	th.mu.Unlock()
	if _, err := with.ApplyGray(gradient(320, 240)); err != nil {
		t.Fatal(err)
	}
	if next, _ := th.Latest(); next.SrcW != 320 || next.W != 160 || next.H != 120 {
		t.Errorf("after the interval: %d×%d of %d×%d", next.W, next.H, next.SrcW, next.SrcH)
	}
}

// TestThumbnailerSizes: small frames are kept as they are, portrait ones
// keep their aspect ratio, odd factors average uneven blocks.
func TestThumbnailerSizes(t *testing.T) {
	for _, tc := range []struct{ w, h, side, tw, th int }{
		{64, 64, 0, 64, 64},
		{160, 90, 0, 160, 90},
		{480, 640, 0, 120, 160},
		{1920, 1080, 0, 160, 90},
		{1000, 3, 100, 100, 1},
		{3, 1000, 100, 1, 100},
		{37, 53, 10, 7, 10},
	} {
		th := &Thumbnailer{MaxSide: tc.side, Interval: time.Nanosecond}
		th.offerGray(gradient(tc.w, tc.h), nil)
		got, ok := th.Latest()
		if !ok || got.W != tc.tw || got.H != tc.th || len(got.Pix) != tc.tw*tc.th {
			t.Errorf("%d×%d side %d: %d×%d (%d pixels), want %d×%d", tc.w, tc.h, tc.side, got.W, got.H, len(got.Pix), tc.tw, tc.th)
		}
	}
	// Unchanged size: the pixels themselves.
	img := gradient(50, 40)
	th := &Thumbnailer{}
	th.offerGray(img, nil)
	got, _ := th.Latest()
	for y := range 40 {
		for x := range 50 {
			if got.Pix[y*50+x] != img.GrayAt(5+x, 2+y).Y {
				t.Fatalf("pixel (%d, %d) changed", x, y)
			}
		}
	}
}

// TestThumbnailerROIOutside: a frame the ROI does not fit is refused, but
// its thumbnail is kept: it shows the operator why.
func TestThumbnailerROIOutside(t *testing.T) {
	th := &Thumbnailer{}
	p := Preprocess{ROI: ROI{X: 600, Y: 0, W: 100, H: 100}, Thumb: th}
	if _, err := p.ApplyGray(gradient(640, 480)); !errors.Is(err, ErrInvalidOption) {
		t.Fatalf("ROI outside the frame: %v", err)
	}
	if got, ok := th.Latest(); !ok || got.SrcW != 640 {
		t.Errorf("no thumbnail of the refused frame")
	}
	var nilThumb *Thumbnailer
	nilThumb.offerGray(gradient(8, 8), nil)
	if _, ok := nilThumb.Latest(); ok {
		t.Error("a nil Thumbnailer has a thumbnail")
	}
}

// TestThumbnailerConcurrent: many goroutines offering frames make at most
// one thumbnail per interval and race with no reader (go test -race).
func TestThumbnailerConcurrent(t *testing.T) {
	th := &Thumbnailer{Interval: time.Hour}
	p := Preprocess{Size: 8, Thumb: th}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				if _, err := p.ApplyGray(gradient(64, 48)); err != nil {
					t.Error(err)
				}
				th.Latest()
			}
		}()
	}
	wg.Wait()
	if got, ok := th.Latest(); !ok || got.W != 64 || got.H != 48 {
		t.Errorf("thumbnail %+v", got)
	}
}
