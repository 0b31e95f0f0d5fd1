//go:build !nocv

package stream

import (
	"fmt"
	"image"

	"gocv.io/x/gocv"
)

// Apply preprocesses one image. src must be an 8-bit gocv.Mat with 1 (gray),
// 3 (BGR) or 4 (BGRA) channels. It is not modified. The returned Frame has W,
// H and Pix set; the caller fills in Seq, Time and Wall.
//
// Gray levels are converted to float64 before resizing, so area
// interpolation keeps sub-level precision when it downsamples.
func (p Preprocess) Apply(src gocv.Mat) (Frame, error) {
	if src.Empty() {
		return Frame{}, fmt.Errorf("empty image: %w", ErrInvalidOption)
	}
	// Before CheckFrame: a frame the ROI does not fit is exactly what the
	// operator needs to see.
	p.Thumb.offerMat(src)
	if err := p.CheckFrame(src.Cols(), src.Rows()); err != nil {
		return Frame{}, err
	}
	code, convert, ok := grayConversion(src.Type())
	if !ok {
		return Frame{}, fmt.Errorf("image type %v: want 8-bit gray, BGR or BGRA: %w", src.Type(), ErrInvalidOption)
	}
	if p.Gray {
		return grayFrame(src, code, convert)
	}

	crop := src
	if !p.ROI.IsZero() {
		r := p.ROI
		crop = src.Region(image.Rect(r.X, r.Y, r.X+r.W, r.Y+r.H))
		defer crop.Close()
	}
	gray := crop
	if convert {
		gray = gocv.NewMat()
		defer gray.Close()
		gocv.CvtColor(crop, &gray, code)
	}
	full := gocv.NewMat() // gray levels 0..255 as float64
	defer full.Close()
	gray.ConvertTo(&full, gocv.MatTypeCV64F)
	f := &full
	if ow, oh := p.OutputSize(full.Cols(), full.Rows()); ow != full.Cols() || oh != full.Rows() {
		small := gocv.NewMat()
		defer small.Close()
		gocv.Resize(full, &small, image.Pt(ow, oh), 0, 0, gocv.InterpolationArea)
		f = &small
	}
	data, err := f.DataPtrFloat64()
	if err != nil {
		return Frame{}, fmt.Errorf("reading pixels: %w", err)
	}
	w, h := f.Cols(), f.Rows()
	if len(data) != w*h {
		return Frame{}, fmt.Errorf("got %d pixels for a %dx%d image: %w", len(data), w, h, ErrInvalidOption)
	}
	pix := append([]float64(nil), data...)
	toUnit(pix)
	if p.Binarize {
		binarize(pix, p.Threshold)
	}
	return p.withReference(Frame{W: w, H: h, SrcW: src.Cols(), SrcH: src.Rows(), Pix: pix}, func(r Preprocess) (Frame, error) { return r.Apply(src) })
}

// grayConversion returns the conversion that turns an image of type t into
// 8-bit gray, convert = false when it already is, and ok = false for a type
// physd does not read (anything but 8-bit gray, BGR or BGRA).
func grayConversion(t gocv.MatType) (code gocv.ColorConversionCode, convert, ok bool) {
	switch t {
	case gocv.MatTypeCV8UC1:
		return 0, false, true
	case gocv.MatTypeCV8UC3:
		return gocv.ColorBGRToGray, true, true
	case gocv.MatTypeCV8UC4:
		return gocv.ColorBGRAToGray, true, true
	}
	return 0, false, false
}

// grayFrame is the whole of src in 8-bit gray as Frame.Gray (Preprocess.Gray).
func grayFrame(src gocv.Mat, code gocv.ColorConversionCode, convert bool) (Frame, error) {
	gray := src
	if convert {
		gray = gocv.NewMat()
		defer gray.Close()
		gocv.CvtColor(src, &gray, code)
	}
	w, h := gray.Cols(), gray.Rows()
	data, err := gray.DataPtrUint8()
	if err != nil || !gray.IsContinuous() || len(data) != w*h {
		// A region of a larger Mat: copy row by row through a clone.
		c := gray.Clone()
		defer c.Close()
		if data, err = c.DataPtrUint8(); err != nil {
			return Frame{}, fmt.Errorf("reading pixels: %w", err)
		}
	}
	if len(data) != w*h {
		return Frame{}, fmt.Errorf("got %d pixels for a %dx%d image: %w", len(data), w, h, ErrInvalidOption)
	}
	g := image.NewGray(image.Rect(0, 0, w, h))
	copy(g.Pix, data)
	return Frame{W: w, H: h, SrcW: w, SrcH: h, Gray: g}, nil
}
