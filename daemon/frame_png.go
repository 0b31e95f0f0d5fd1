package daemon

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"math"
	"net/http"

	"github.com/physd/physd/stream"
)

// framePNG encodes a preprocessed frame (gray levels in [0, 1]) as an
// 8-bit gray PNG: exactly what the estimator saw, ROI cut out and resized.
func framePNG(f stream.Frame) ([]byte, error) {
	if f.W <= 0 || f.H <= 0 || len(f.Pix) != f.W*f.H {
		return nil, fmt.Errorf("frame png: %d pixels for %d×%d", len(f.Pix), f.W, f.H)
	}
	img := image.NewGray(image.Rect(0, 0, f.W, f.H))
	for i, v := range f.Pix {
		if !(v > 0) { // also NaN
			v = 0
		}
		img.Pix[i] = uint8(math.Round(math.Min(v, 1) * 255))
	}
	return encodePNG(img)
}

// thumbPNG encodes a source thumbnail (the whole frame before the crop).
func thumbPNG(t stream.Thumbnail) ([]byte, error) {
	if t.W <= 0 || t.H <= 0 || len(t.Pix) != t.W*t.H {
		return nil, fmt.Errorf("thumbnail png: %d pixels for %d×%d", len(t.Pix), t.W, t.H)
	}
	return encodePNG(&image.Gray{Pix: t.Pix, Stride: t.W, Rect: image.Rect(0, 0, t.W, t.H)})
}

func encodePNG(img image.Image) ([]byte, error) {
	var b bytes.Buffer
	// Speed over size: a 64×64 frame or a 160-pixel thumbnail is a few KB
	// either way, and a board encodes one per viewer per second.
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if err := enc.Encode(&b, img); err != nil {
		return nil, fmt.Errorf("png: %w", err)
	}
	return b.Bytes(), nil
}

// writePNG answers with an image that must not be cached: it is replaced
// every frame.
func writePNG(w http.ResponseWriter, data []byte) {
	h := w.Header()
	h.Set("Content-Type", "image/png")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(data)
}

// framePNGHandler serves GET /api/v1/cameras/{camera}/frame.png: the
// newest preprocessed frame.
func (d *Daemon) framePNGHandler(w http.ResponseWriter, r *http.Request) {
	c := d.cameraOr404(w, r)
	if c == nil {
		return
	}
	f, ok := c.dash.latestFrame()
	if !ok {
		httpError(w, http.StatusNotFound, "camera %q has delivered no frame yet", c.cfg.Name)
		return
	}
	data, err := framePNG(f)
	if err != nil {
		d.log.Warn("dashboard frame", "camera", c.cfg.Name, "err", err)
		httpError(w, http.StatusInternalServerError, "frame not encoded: %v", err)
		return
	}
	writePNG(w, data)
}

// sourcePNGHandler serves GET /api/v1/cameras/{camera}/source.png: a small
// gray copy of the whole source frame, at most a second old when frames
// arrive; the page draws the ROI on it.
func (d *Daemon) sourcePNGHandler(w http.ResponseWriter, r *http.Request) {
	c := d.cameraOr404(w, r)
	if c == nil {
		return
	}
	var th stream.Thumbnail
	ok := false
	if c.dash != nil {
		th, ok = c.dash.thumb.Latest()
	}
	if !ok {
		httpError(w, http.StatusNotFound, "camera %q has no source picture yet", c.cfg.Name)
		return
	}
	data, err := thumbPNG(th)
	if err != nil {
		d.log.Warn("dashboard source picture", "camera", c.cfg.Name, "err", err)
		httpError(w, http.StatusInternalServerError, "source picture not encoded: %v", err)
		return
	}
	writePNG(w, data)
}
