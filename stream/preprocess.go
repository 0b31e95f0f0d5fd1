package stream

import (
	"fmt"
	"image"
	"math"
)

// MaxSize is the largest Preprocess.Size accepted.
const MaxSize = 4096

// ROI is a rectangle in the source's pixels; the zero value means the whole
// frame.
type ROI struct{ X, Y, W, H int }

// IsZero reports whether r is the zero value, which selects the whole frame.
func (r ROI) IsZero() bool { return r == ROI{} }

// validate checks what can be checked without knowing the frame size.
func (r ROI) validate() error {
	if r.IsZero() {
		return nil
	}
	if r.X < 0 || r.Y < 0 {
		return fmt.Errorf("ROI %+v: X and Y must be >= 0: %w", r, ErrInvalidOption)
	}
	if r.W <= 0 || r.H <= 0 {
		return fmt.Errorf("ROI %+v: W and H must be > 0 (or leave the whole ROI zero for the full frame): %w", r, ErrInvalidOption)
	}
	return nil
}

// Preprocess holds the preprocessing settings. They are applied to each
// frame in this order: crop to ROI, convert to grayscale, resize to
// Size×Size with area interpolation (Size 0 keeps the size), then binarise
// if Binarize is set. Binarisation uses Otsu's threshold when Threshold is 0,
// or the fixed Threshold in (0,1) otherwise.
type Preprocess struct {
	// ROI is the crop, in source pixels; zero keeps the whole frame.
	ROI ROI
	// Size is the side of the square output; 0 keeps the cropped size.
	Size int
	// Binarize maps every pixel to 0 or 1.
	Binarize bool
	// Threshold is the fixed binarisation threshold in (0,1); 0 uses Otsu.
	Threshold float64
	// Thumb, when set, is offered each whole frame before the crop and
	// keeps a small gray copy at a low rate, for an operator's view of the
	// region of interest; it does not change the output.
	Thumb *Thumbnailer
}

// Validate checks the settings that do not depend on the frame size. The
// error wraps ErrInvalidOption and names the field.
func (p Preprocess) Validate() error {
	if err := p.ROI.validate(); err != nil {
		return err
	}
	if p.Size < 0 || p.Size > MaxSize {
		return fmt.Errorf("option Size = %d: must be in [0, %d] (0 keeps the size): %w", p.Size, MaxSize, ErrInvalidOption)
	}
	if math.IsNaN(p.Threshold) || p.Threshold < 0 || p.Threshold >= 1 {
		return fmt.Errorf("option Threshold = %v: must be in [0,1) (0 selects Otsu): %w", p.Threshold, ErrInvalidOption)
	}
	return nil
}

// CheckFrame checks that the settings are valid for a w×h source frame, in
// particular that the ROI lies inside it.
func (p Preprocess) CheckFrame(w, h int) error {
	if err := p.Validate(); err != nil {
		return err
	}
	if w <= 0 || h <= 0 {
		return fmt.Errorf("frame size %dx%d: %w", w, h, ErrNotVideo)
	}
	r := p.ROI
	if !r.IsZero() && (r.X > w-r.W || r.Y > h-r.H) { // no overflow: W, H > 0
		return fmt.Errorf("ROI %+v lies outside the %dx%d frame: %w", r, w, h, ErrInvalidOption)
	}
	return nil
}

// ApplyGray preprocesses an 8-bit gray image, like Apply, in pure Go (it
// needs no OpenCV and exists in nocv builds too). Any stride and bounds
// offset are allowed. The returned Frame has W, H and Pix set; the caller
// fills in Seq, Time and Wall.
//
// The resize reproduces OpenCV's INTER_AREA on float64 levels: an area
// average when the image shrinks along both axes, and OpenCV's
// area-flavoured bilinear interpolation otherwise, with OpenCV's float32
// weights. On the same pixels it matches Apply to within 1e-4 gray levels
// (measured max 1.3e-5 on random images: float rounding in another
// summation order), and binarises identically.
func (p Preprocess) ApplyGray(img *image.Gray) (Frame, error) {
	if img == nil {
		return Frame{}, fmt.Errorf("nil image: %w", ErrInvalidOption)
	}
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	if w <= 0 || h <= 0 {
		return Frame{}, fmt.Errorf("empty image %v: %w", b, ErrInvalidOption)
	}
	for _, y := range []int{0, h - 1} {
		off := img.PixOffset(b.Min.X, b.Min.Y+y)
		if img.Stride < w || off < 0 || off+w > len(img.Pix) {
			return Frame{}, fmt.Errorf("image %v: Pix too short for its bounds: %w", b, ErrInvalidOption)
		}
	}
	// Before CheckFrame: a frame the ROI does not fit is exactly what the
	// operator needs to see.
	p.Thumb.offerGray(img)
	if err := p.CheckFrame(w, h); err != nil {
		return Frame{}, err
	}
	x0, y0 := b.Min.X, b.Min.Y
	if !p.ROI.IsZero() {
		x0, y0, w, h = x0+p.ROI.X, y0+p.ROI.Y, p.ROI.W, p.ROI.H
	}
	full := make([]float64, w*h) // gray levels 0..255
	for y := 0; y < h; y++ {
		row := img.Pix[img.PixOffset(x0, y0+y):]
		for x, v := range row[:w] {
			full[y*w+x] = float64(v)
		}
	}
	pix, dw, dh := full, w, h
	if p.Size > 0 && (w != p.Size || h != p.Size) {
		pix, dw, dh = resizeArea(full, w, h, p.Size, p.Size), p.Size, p.Size
	}
	toUnit(pix)
	if p.Binarize {
		binarize(pix, p.Threshold)
	}
	return Frame{W: dw, H: dh, SrcW: b.Dx(), SrcH: b.Dy(), Pix: pix}, nil
}

// toUnit maps gray levels 0..255 to [0, 1] in place. The resize's weights
// are float32, as OpenCV's, and may sum to slightly more than 1: a white
// area comes out at 255·(1+6e-8). Such values are clamped, so that every
// level is in [0, 1] as Frame promises.
func toUnit(pix []float64) {
	for i, v := range pix {
		pix[i] = min(max(v/255, 0), 1)
	}
}

// binarize sets each value to 1 if it is above the threshold and to 0
// otherwise. A threshold of 0 selects Otsu's threshold.
func binarize(pix []float64, threshold float64) {
	if threshold == 0 {
		threshold = otsu(pix)
	}
	for i, v := range pix {
		if v > threshold {
			pix[i] = 1
		} else {
			pix[i] = 0
		}
	}
}

// otsu returns Otsu's threshold for values in [0,1], computed on a 256-bin
// histogram like OpenCV's THRESH_OTSU. A value above the returned threshold
// falls in the upper bin class. For an image with a single gray level the
// threshold is undefined, and otsu returns 0.5.
func otsu(pix []float64) float64 {
	var hist [256]float64
	for _, v := range pix {
		hist[bin(v)]++
	}
	n := float64(len(pix))
	var sumAll float64
	for i, c := range hist {
		sumAll += float64(i) * c
	}
	best, bestK := 0.0, -1
	var w0, sum0 float64
	for k := 0; k < 255; k++ {
		w0 += hist[k]
		sum0 += float64(k) * hist[k]
		w1 := n - w0
		if w0 == 0 || w1 == 0 {
			continue
		}
		m0, m1 := sum0/w0, (sumAll-sum0)/w1
		if v := w0 * w1 * (m0 - m1) * (m0 - m1); v > best {
			best, bestK = v, k
		}
	}
	if bestK < 0 {
		return 0.5
	}
	// Values in bins <= bestK go low: bin(v) <= k  <=>  v < (k+0.5)/255.
	return math.Nextafter((float64(bestK)+0.5)/255, 0)
}

// bin maps a value in [0,1] to a histogram bin 0..255.
func bin(v float64) int {
	switch {
	case !(v > 0): // also NaN
		return 0
	case v >= 1:
		return 255
	}
	return int(v*255 + 0.5)
}
