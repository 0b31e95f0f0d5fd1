package stream

import (
	"fmt"
	"image"
	"math"
)

// MaxSize is the largest Preprocess.Size accepted, and the largest side of
// a resized output.
const MaxSize = 4096

// MinSide is the least side of an output resized to Preprocess.Size: a thin
// crop (a cart's track, 640×40) keeps at least this many rows or columns,
// and pays for them with a slightly larger pixel count than Size².
const MinSide = 8

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
// frame in this order: crop to ROI, convert to grayscale, resize with area
// interpolation to OutputSize (about Size² pixels with the crop's aspect
// ratio kept; Size 0 keeps the size), then binarise if Binarize is set.
// Binarisation uses Otsu's threshold when Threshold is 0, or the fixed
// Threshold in (0,1) otherwise.
//
// The resize never distorts the crop (up to rounding to whole pixels): a
// 590×40 crop at Size 64 becomes 246×17, not 64×64, so that an object
// keeps its shape and a motion along the crop's long side keeps its
// resolution. A square crop becomes Size×Size, as it always did.
type Preprocess struct {
	// ROI is the crop, in source pixels; zero keeps the whole frame.
	ROI ROI
	// Size sets the resized output's pixel count to about Size², with the
	// crop's aspect ratio kept (see OutputSize); 0 keeps the cropped size.
	Size int
	// Width and Height, when both are set, fix the output's size exactly,
	// whatever the crop's shape (Size is then ignored): the way to bring
	// videos of different shapes to one frame size. Both 0 leaves the size
	// to Size.
	Width, Height int
	// Binarize maps every pixel to 0 or 1.
	Binarize bool
	// Threshold is the fixed binarisation threshold in (0,1); 0 uses Otsu.
	Threshold float64
	// Reference, when set, is a region of the whole frame, in source
	// pixels, that should stay still (a wall, the support): each frame's
	// gray patch of it is returned as Frame.Ref, for measuring the
	// camera's own motion. Zero returns none.
	Reference ROI
	// Gray, when set, makes the frame the whole decoded picture in 8-bit
	// gray (Frame.Gray) and nothing else: no crop, resize, Pix or
	// reference patch. A camera with zones decodes its stream once this
	// way and each zone cuts its own frames from it (ApplyGray). It
	// excludes every other option but Thumb.
	Gray bool
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
	if p.Gray && (!p.ROI.IsZero() || p.Size != 0 || p.Width != 0 || p.Height != 0 || p.Binarize || p.Threshold != 0 || !p.Reference.IsZero()) {
		return fmt.Errorf("option Gray: the whole frame in gray excludes ROI, Size, Width×Height, Binarize, Threshold and Reference: %w", ErrInvalidOption)
	}
	if err := p.Reference.validate(); err != nil {
		return fmt.Errorf("reference: %w", err)
	}
	if p.Size < 0 || p.Size > MaxSize {
		return fmt.Errorf("option Size = %d: must be in [0, %d] (0 keeps the size): %w", p.Size, MaxSize, ErrInvalidOption)
	}
	if (p.Width == 0) != (p.Height == 0) || p.Width < 0 || p.Width > MaxSize || p.Height < 0 || p.Height > MaxSize {
		return fmt.Errorf("option Width×Height = %d×%d: both must be in [1, %d], or both 0 to let Size decide: %w", p.Width, p.Height, MaxSize, ErrInvalidOption)
	}
	if math.IsNaN(p.Threshold) || p.Threshold < 0 || p.Threshold >= 1 {
		return fmt.Errorf("option Threshold = %v: must be in [0,1) (0 selects Otsu): %w", p.Threshold, ErrInvalidOption)
	}
	return nil
}

// OutputSize returns the size of the frames made from a w×h crop: Width ×
// Height when they are set; the crop's own size when Size is 0; Size×Size
// for a square crop; otherwise the W×H with W/H as close to w/h as whole
// pixels allow and W·H ≈ Size², each side at least MinSide (or Size, if
// smaller) and at most MaxSize. A crop smaller than Size² pixels is
// enlarged, as a square crop always was, so that every crop of a camera
// gives the encoder the same number of pixels.
func (p Preprocess) OutputSize(w, h int) (ow, oh int) {
	switch {
	case p.Width > 0 && p.Height > 0:
		return p.Width, p.Height
	case p.Size <= 0 || w <= 0 || h <= 0:
		return w, h
	case w == h:
		return p.Size, p.Size
	}
	return aspectSize(w, h, p.Size)
}

// aspectSize is OutputSize's aspect-keeping branch for size > 0 and a
// non-square w×h crop.
func aspectSize(w, h, size int) (int, int) {
	area := float64(size) * float64(size)
	a := float64(w) / float64(h)
	lo := float64(min(MinSide, size))
	fw, fh := math.Round(math.Sqrt(area*a)), math.Round(math.Sqrt(area/a))
	switch {
	case fh < lo:
		fh, fw = lo, math.Round(area/lo)
	case fw < lo:
		fw, fh = lo, math.Round(area/lo)
	}
	fw, fh = max(1, min(fw, MaxSize)), max(1, min(fh, MaxSize))
	return int(fw), int(fh)
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
	if r := p.Reference; !r.IsZero() && (r.X > w-r.W || r.Y > h-r.H) {
		return fmt.Errorf("reference %+v lies outside the %dx%d frame: %w", r, w, h, ErrInvalidOption)
	}
	return nil
}

// maxReferencePixels bounds a reference patch: a larger region is read
// resized to about that many pixels, its aspect ratio kept.
const maxReferencePixels = 128 * 128

// referencePre is the preprocessing of the reference patch: the region,
// gray, at its own size up to maxReferencePixels.
func (p Preprocess) referencePre() Preprocess {
	r := Preprocess{ROI: p.Reference}
	if p.Reference.W*p.Reference.H > maxReferencePixels {
		r.Size = 128
	}
	return r
}

// withReference adds the reference patch of the same source frame to f,
// read by apply with the reference's preprocessing.
func (p Preprocess) withReference(f Frame, apply func(Preprocess) (Frame, error)) (Frame, error) {
	if p.Reference.IsZero() {
		return f, nil
	}
	ref, err := apply(p.referencePre())
	if err != nil {
		return Frame{}, fmt.Errorf("reference: %w", err)
	}
	f.Ref, f.RefW, f.RefH = ref.Pix, ref.W, ref.H
	return f, nil
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
	return p.applyGray(img, nil)
}

// levels maps a decoder's 8-bit luma to the gray levels physd reads.
type levels [256]byte

// videoLevels maps luma from the video range [16, 235] that VP8 and H.264
// encoders use onto [0, 255], as OpenCV's conversion does for the other
// sources, so thresholds mean the same for every camera.
func videoLevels() *levels {
	var lut levels
	for i := range lut {
		v := (i - 16) * 255 / 219
		lut[i] = byte(min(max(v, 0), 255))
	}
	return &lut
}

// grayScratch is a reader's working memory for applyGray, reused from
// frame to frame so that a frame costs one allocation (its pixels, which
// the windows keep) instead of a full-size float copy of the crop and the
// resize's tables. Not safe for concurrent use.
type grayScratch struct {
	// levels, when set, maps every pixel read (videoLevels for a
	// decoder's luma): applied to the pixels preprocessing reads — the
	// region, the reference patch, a thumbnail when one is due — instead
	// of to the whole picture first, which cost a 640×480 camera more
	// than the crop and resize together.
	levels     *levels
	full, tmp  []float64
	tabFor     [4]int // the w, h, dw, dh the tables are for
	xtab, ytab []areaWeight
	// slab is what is left of the last block new frames' pixels are
	// cut from (frame).
	slab []float64
}

// frameSlab is how many frames' pixels one block holds. A camera region's
// frame is often just over the allocator's largest size class (32 KB:
// 209×20 pixels are 33,440 bytes), and an object larger than that takes
// whole 8 KB pages — 22 % more for each frame alone; cut from a block of
// frames that arrive together, the frames of a window pay nothing, and a
// block lives only until the last of its frames leaves every window (the
// frames leave in the order they came).
const frameSlab = 16

// frame returns n zeroed pixels for a new frame, cut from the current
// block (its capacity ends at its length: nothing appended to one frame
// can reach the next).
func (s *grayScratch) frame(n int) []float64 {
	if len(s.slab) < n {
		s.slab = make([]float64, n*frameSlab)
	}
	f := s.slab[:n:n]
	s.slab = s.slab[n:]
	return f
}

// floats returns a slice of n from buf, grown if needed.
func floats(buf *[]float64, n int) []float64 {
	if cap(*buf) < n {
		*buf = make([]float64, n)
	}
	return (*buf)[:n]
}

// applyGray is ApplyGray with working memory s (nil: allocated).
func (p Preprocess) applyGray(img *image.Gray, s *grayScratch) (Frame, error) {
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
	var lv *levels
	if s != nil {
		lv = s.levels
	}
	p.Thumb.offerGray(img, lv)
	if err := p.CheckFrame(w, h); err != nil {
		return Frame{}, err
	}
	if p.Gray {
		// A copy: decoders reuse their picture buffers.
		g := image.NewGray(image.Rect(0, 0, w, h))
		for y := range h {
			row := g.Pix[y*w : (y+1)*w]
			copy(row, img.Pix[img.PixOffset(b.Min.X, b.Min.Y+y):])
			if lv != nil {
				for x, v := range row {
					row[x] = lv[v]
				}
			}
		}
		return Frame{W: w, H: h, SrcW: w, SrcH: h, Gray: g}, nil
	}
	x0, y0 := b.Min.X, b.Min.Y
	if !p.ROI.IsZero() {
		x0, y0, w, h = x0+p.ROI.X, y0+p.ROI.Y, p.ROI.W, p.ROI.H
	}
	ow, oh := p.OutputSize(w, h)
	resize := ow != w || oh != h
	var full []float64 // gray levels 0..255
	if resize && s != nil {
		full = floats(&s.full, w*h) // only read by the resize
	} else if s != nil {
		full = s.frame(w * h) // the frame's own pixels
	} else {
		full = make([]float64, w*h)
	}
	for y := 0; y < h; y++ {
		row := img.Pix[img.PixOffset(x0, y0+y):]
		out := full[y*w : (y+1)*w]
		if lv != nil {
			for x, v := range row[:w] {
				out[x] = float64(lv[v])
			}
			continue
		}
		for x, v := range row[:w] {
			out[x] = float64(v)
		}
	}
	pix, dw, dh := full, w, h
	if resize {
		pix, dw, dh = s.resizeArea(full, w, h, ow, oh), ow, oh
	}
	toUnit(pix)
	if p.Binarize {
		binarize(pix, p.Threshold)
	}
	f := Frame{W: dw, H: dh, SrcW: b.Dx(), SrcH: b.Dy(), Pix: pix}
	if p.Reference.IsZero() {
		return f, nil
	}
	return p.withReference(f, func(r Preprocess) (Frame, error) { return r.applyGray(img, &grayScratch{levels: lv}) })
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
