package stream

import (
	"errors"
	"image"
	"math"
	"strings"
	"testing"
	"time"
)

// fuzzMaxPixels bounds the source image and the output of one FuzzPreprocess
// execution, so that each takes milliseconds.
const fuzzMaxPixels = 1 << 20

// fuzzApplyCV, when set (builds with OpenCV, preprocess_cv_fuzz_test.go),
// preprocesses img with the OpenCV path, for FuzzPreprocess to compare.
var fuzzApplyCV func(p Preprocess, img *image.Gray) (Frame, error)

// FuzzPreprocess runs the pure-Go preprocessing (Validate, CheckFrame,
// ApplyGray, with a thumbnailer) on arbitrary frame sizes, ROIs, output
// sizes, thresholds and pixels, and checks:
//
//   - nothing panics;
//   - Validate and CheckFrame refuse exactly the settings the documentation
//     refuses, with an error that wraps ErrInvalidOption (or ErrNotVideo
//     for a frame with no pixels) and names the field;
//   - an accepted frame has W·H == len(Pix), the crop's size when Size is
//     0, Size×Size for a square crop, and otherwise the crop's aspect
//     ratio within rounding and about Size² pixels (checkOutputSize),
//     every pixel finite
//     and in [0, 1], binarised pixels exactly 0 or 1; without a resize the
//     pixels are the source levels / 255, and a uniform source stays
//     uniform through the resize;
//   - the thumbnail is the whole frame, at most MaxSide on its longer side;
//   - with OpenCV, Apply agrees with ApplyGray.
//
// The source image is a sub-image with a margin (mx, my) around it, so its
// bounds do not start at 0 and its stride is wider than it. Its pixels
// repeat the bytes of pix. The committed corpus is in
// testdata/fuzz/FuzzPreprocess.
func FuzzPreprocess(f *testing.F) {
	type seed struct {
		w, h, mx, my         int
		rx, ry, rw, rh, size int
		bin                  bool
		thr                  float64
		side                 int
		pix                  []byte
	}
	ramp := make([]byte, 256)
	for i := range ramp {
		ramp[i] = byte(i)
	}
	for _, s := range []seed{
		{64, 48, 0, 0, 0, 0, 0, 0, 16, false, 0, 0, ramp},
		{64, 48, 3, 1, 4, 2, 33, 17, 7, true, 0, 8, ramp},
		{1, 4096, 0, 0, 0, 0, 0, 0, 5, true, 0.5, 0, ramp},
		{4096, 1, 1, 1, 0, 0, 4096, 1, 0, false, 0, 0, []byte{200}},
		{0, 10, 0, 0, 0, 0, 0, 0, 8, false, 0, 0, nil},
		{1, 1, 0, 0, 0, 0, 1, 1, 1, true, 0, 0, []byte{255}},
		{7, 5, 0, 0, 0, 0, 0, 0, 9, false, 0, 0, []byte{255}},
		{10, 10, 0, 0, 8, 8, 3, 3, 0, false, 0, 0, ramp},
		{10, 10, 0, 0, -1, 0, 3, 3, 0, false, 0, 0, ramp},
		{10, 10, 0, 0, 1, 1, 0, 3, 0, false, 0, 0, ramp},
		{10, 10, 0, 0, math.MaxInt, 0, math.MaxInt, 1, 0, false, 0, 0, ramp},
		{10, 10, 0, 0, 0, 0, 0, 0, MaxSize + 1, false, 0, 0, ramp},
		{10, 10, 0, 0, 0, 0, 0, 0, 4, true, math.NaN(), 0, ramp},
		{10, 10, 0, 0, 0, 0, 0, 0, 4, true, 1, 0, ramp},
		{10, 10, 0, 0, 0, 0, 0, 0, 4, true, -0.25, 0, ramp},
	} {
		f.Add(s.w, s.h, s.mx, s.my, s.rx, s.ry, s.rw, s.rh, s.size, s.bin, s.thr, s.side, s.pix)
	}
	f.Fuzz(func(t *testing.T, w, h, mx, my, rx, ry, rw, rh, size int, bin bool, thr float64, side int, pix []byte) {
		p := Preprocess{ROI: ROI{X: rx, Y: ry, W: rw, H: rh}, Size: size, Binarize: bin, Threshold: thr}
		checkOptionError(t, p, "Validate", p.Validate(), wantOptionError(p, 1, 1, false))
		checkOptionError(t, p, "CheckFrame", p.CheckFrame(w, h), wantOptionError(p, w, h, true))

		// Build the image only when it is small; margins at most 3 pixels.
		mx, my = int(uint(mx)%4), int(uint(my)%4)
		if w < 0 || h < 0 || w > fuzzMaxPixels || h > fuzzMaxPixels || (w+mx)*(h+my) > fuzzMaxPixels {
			return
		}
		cropW, cropH := w, h
		if !p.ROI.IsZero() {
			cropW, cropH = rw, rh
		}
		outW, outH := p.OutputSize(cropW, cropH)
		if p.CheckFrame(w, h) == nil {
			checkOutputSize(t, size, cropW, cropH, outW, outH)
			if outW*outH > fuzzMaxPixels {
				return
			}
		}
		whole := image.NewGray(image.Rect(0, 0, w+mx, h+my))
		if len(pix) > 0 {
			for i := 0; i < len(whole.Pix); i += len(pix) {
				copy(whole.Pix[i:], pix)
			}
		}
		img := whole.SubImage(image.Rect(mx, my, w+mx, h+my)).(*image.Gray)
		thumbs := &Thumbnailer{MaxSide: side % 512, Interval: time.Nanosecond}
		p.Thumb = thumbs
		fr, err := p.ApplyGray(img)
		if err != nil {
			switch {
			case w == 0 || h == 0:
				if !errors.Is(err, ErrInvalidOption) || !strings.Contains(err.Error(), "empty image") {
					t.Fatalf("%dx%d image: error %v, want ErrInvalidOption for an empty image", w, h, err)
				}
			default:
				checkOptionError(t, p, "ApplyGray", err, wantOptionError(p, w, h, true))
			}
			return
		}
		if field := wantOptionError(p, w, h, true); field != "" {
			t.Fatalf("%+v on %dx%d: accepted, want an error naming %s", p, w, h, field)
		}
		checkFrame(t, p, img, fr, outW, outH)
		checkThumb(t, thumbs, w, h)
		if fuzzApplyCV != nil {
			cv, err := fuzzApplyCV(p, img)
			if err != nil {
				t.Fatalf("%+v on %dx%d: ApplyGray accepted, Apply: %v", p, w, h, err)
			}
			comparePaths(t, p, fr, cv)
		}
	})
}

// wantOptionError is the field Validate (frame false) or CheckFrame
// (frame true) must name for settings p and a w×h frame, or "" when they
// are valid, following the order of the documentation: ROI, Size,
// Threshold, then the frame size and the ROI's position in the frame.
func wantOptionError(p Preprocess, w, h int, frame bool) string {
	r := p.ROI
	switch {
	case !r.IsZero() && (r.X < 0 || r.Y < 0 || r.W <= 0 || r.H <= 0):
		return "ROI"
	case p.Size < 0 || p.Size > MaxSize:
		return "Size"
	case !(p.Threshold >= 0 && p.Threshold < 1):
		return "Threshold"
	case !frame:
		return ""
	case w <= 0 || h <= 0:
		return "frame size"
	case !r.IsZero() && (uint64(r.X)+uint64(r.W) > uint64(w) || uint64(r.Y)+uint64(r.H) > uint64(h)):
		return "ROI"
	}
	return ""
}

// checkOptionError asserts that err is nil when field is "", and otherwise
// wraps ErrInvalidOption (ErrNotVideo for the frame size) and names field.
func checkOptionError(t *testing.T, p Preprocess, what string, err error, field string) {
	t.Helper()
	switch {
	case field == "" && err != nil:
		t.Fatalf("%s(%+v) = %v, want nil", what, p, err)
	case field == "":
	case err == nil:
		t.Fatalf("%s(%+v) = nil, want an error naming %s", what, p, field)
	case field == "frame size" && !errors.Is(err, ErrNotVideo):
		t.Fatalf("%s(%+v) = %v, want ErrNotVideo", what, p, err)
	case field != "frame size" && !errors.Is(err, ErrInvalidOption):
		t.Fatalf("%s(%+v) = %v, want ErrInvalidOption", what, p, err)
	case !strings.Contains(err.Error(), field):
		t.Fatalf("%s(%+v) = %v, want it to name %s", what, p, err, field)
	}
}

// checkFrame asserts the properties of an accepted frame.
func checkFrame(t *testing.T, p Preprocess, img *image.Gray, fr Frame, outW, outH int) {
	t.Helper()
	b := img.Bounds()
	if fr.W != outW || fr.H != outH || len(fr.Pix) != fr.W*fr.H {
		t.Fatalf("%+v on %v: frame %dx%d with %d pixels, want %dx%d", p, b, fr.W, fr.H, len(fr.Pix), outW, outH)
	}
	if fr.SrcW != b.Dx() || fr.SrcH != b.Dy() {
		t.Fatalf("%+v on %v: source size %dx%d", p, b, fr.SrcW, fr.SrcH)
	}
	for i, v := range fr.Pix {
		if !(v >= 0 && v <= 1) {
			t.Fatalf("%+v on %v: pixel %d is %v, outside [0, 1]", p, b, i, v)
		}
		if p.Binarize && v != 0 && v != 1 {
			t.Fatalf("%+v on %v: binarised pixel %d is %v", p, b, i, v)
		}
	}
	if p.Binarize {
		return
	}
	// The source levels of the crop, to compare against.
	x0, y0, cw, ch := b.Min.X, b.Min.Y, b.Dx(), b.Dy()
	if !p.ROI.IsZero() {
		x0, y0, cw, ch = x0+p.ROI.X, y0+p.ROI.Y, p.ROI.W, p.ROI.H
	}
	if cw == outW && ch == outH { // no resize: exact levels
		for y := range ch {
			for x := range cw {
				want := float64(img.GrayAt(x0+x, y0+y).Y) / 255
				if got := fr.Pix[y*cw+x]; got != want {
					t.Fatalf("%+v on %v: pixel (%d,%d) is %v, want %v", p, b, x, y, got, want)
				}
			}
		}
		return
	}
	first := img.GrayAt(x0, y0).Y
	for y := range ch {
		for x := range cw {
			if img.GrayAt(x0+x, y0+y).Y != first {
				return
			}
		}
	}
	want := float64(first) / 255
	// Area resizing, as OpenCV's computeResizeAreaTab, ignores a source
	// pixel's share of an output cell when it is under 1e-3 of a pixel:
	// a uniform level then comes out low by up to 1e-3 per cell width
	// (dw/w) on each axis that shrinks.
	tol := 1e-6
	for _, r := range [][2]int{{outW, cw}, {outH, ch}} {
		if r[0] < r[1] {
			tol += want * 1e-3 * float64(r[0]) / float64(r[1])
		}
	}
	for i, v := range fr.Pix {
		if math.Abs(v-want) > tol {
			t.Fatalf("%+v on %v: uniform level %v resized to %v at pixel %d", p, b, want, v, i)
		}
	}
}

// checkOutputSize asserts what Preprocess promises of the output size for
// a cw×ch crop and a Size size, independently of how OutputSize computes
// it: the crop's size for Size 0; Size×Size for a square crop; otherwise
// each side in [1, MaxSize], and, unless a side sits at its bound (MinSide,
// or MaxSize), the crop's aspect ratio to within the rounding of each side
// by half a pixel and W·H within that rounding of Size².
func checkOutputSize(t *testing.T, size, cw, ch, ow, oh int) {
	t.Helper()
	switch {
	case size == 0:
		if ow != cw || oh != ch {
			t.Fatalf("Size 0, %dx%d crop: output %dx%d", cw, ch, ow, oh)
		}
		return
	case cw == ch:
		if ow != size || oh != size {
			t.Fatalf("Size %d, square %dx%d crop: output %dx%d", size, cw, ch, ow, oh)
		}
		return
	}
	if ow < 1 || oh < 1 || ow > MaxSize || oh > MaxSize {
		t.Fatalf("Size %d, %dx%d crop: output %dx%d outside [1, %d]", size, cw, ch, ow, oh, MaxSize)
	}
	lo := min(MinSide, size)
	if ow <= lo || oh <= lo || ow == MaxSize || oh == MaxSize {
		return
	}
	// Rounding each side by ≤ ½ pixel moves log(W/H) and log(W·H) by at
	// most log((W+½)/(W−½)) + log((H+½)/(H−½)).
	slack := math.Log((float64(ow)+0.5)/(float64(ow)-0.5)) + math.Log((float64(oh)+0.5)/(float64(oh)-0.5)) + 1e-9
	if d := math.Abs(math.Log(float64(ow)/float64(oh)) - math.Log(float64(cw)/float64(ch))); d > slack {
		t.Fatalf("Size %d, %dx%d crop: output %dx%d distorts the aspect ratio (log ratio off by %.3g > %.3g)", size, cw, ch, ow, oh, d, slack)
	}
	if d := math.Abs(math.Log(float64(ow)*float64(oh)) - 2*math.Log(float64(size))); d > slack {
		t.Fatalf("Size %d, %dx%d crop: output %dx%d holds %d pixels, not about %d", size, cw, ch, ow, oh, ow*oh, size*size)
	}
}

// checkThumb asserts that the thumbnail, made from every frame, is the
// whole w×h frame within its size limit.
func checkThumb(t *testing.T, th *Thumbnailer, w, h int) {
	t.Helper()
	got, ok := th.Latest()
	if !ok {
		t.Fatalf("%dx%d: no thumbnail", w, h)
	}
	side := th.MaxSide
	if side <= 0 {
		side = DefaultThumbSide
	}
	if got.SrcW != w || got.SrcH != h || got.W < 1 || got.H < 1 || got.W > max(side, 1) || got.H > max(side, 1) ||
		got.W > w || got.H > h || len(got.Pix) != got.W*got.H {
		t.Fatalf("%dx%d frame, MaxSide %d: thumbnail %dx%d of %dx%d with %d pixels", w, h, th.MaxSide, got.W, got.H, got.SrcW, got.SrcH, len(got.Pix))
	}
}

// comparePaths asserts that the OpenCV path gives the pure-Go path's frame:
// the same size, levels within float rounding, and the same binarised
// pixels when there is no resize (with one, a level that rounds to the
// other side of Otsu's threshold may flip).
func comparePaths(t *testing.T, p Preprocess, pure, cv Frame) {
	t.Helper()
	if pure.W != cv.W || pure.H != cv.H || len(pure.Pix) != len(cv.Pix) || pure.SrcW != cv.SrcW || pure.SrcH != cv.SrcH {
		t.Fatalf("%+v: ApplyGray %dx%d of %dx%d, Apply %dx%d of %dx%d", p, pure.W, pure.H, pure.SrcW, pure.SrcH, cv.W, cv.H, cv.SrcW, cv.SrcH)
	}
	cw, ch := pure.SrcW, pure.SrcH
	if !p.ROI.IsZero() {
		cw, ch = p.ROI.W, p.ROI.H
	}
	ow, oh := p.OutputSize(cw, ch)
	resized := ow != cw || oh != ch
	if p.Binarize && resized {
		return
	}
	for i := range pure.Pix {
		if d := math.Abs(pure.Pix[i] - cv.Pix[i]); d > 1e-4/255 {
			t.Fatalf("%+v %dx%d: pixel %d: ApplyGray %v, Apply %v", p, pure.SrcW, pure.SrcH, i, pure.Pix[i], cv.Pix[i])
		}
	}
}
