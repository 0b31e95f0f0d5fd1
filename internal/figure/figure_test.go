package figure

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/physd/physd/estimator"
	"github.com/physd/physd/sim"
	"github.com/physd/physd/window"
)

// fitPendulum fits the underdamped pendulum (1.5π s, 50°, 20 fps) and
// certifies it: a real window, not a hand-made latent.
func fitPendulum(t *testing.T) (*estimator.Result, window.Verdict) {
	t.Helper()
	ctx := context.Background()
	g1, g0 := sim.GroundTruth(sim.RegimeUnderdamped)
	fs, _, err := sim.Render(ctx, sim.Scene{System: sim.SystemPendulum, Gamma1: g1, Gamma0: g0, Z0: 50, Duration: 1.5 * math.Pi, FPS: 20, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	c := estimator.Clip{W: fs[0].Rect.Dx(), H: fs[0].Rect.Dy(), Dt: 1.0 / 20}
	for _, f := range fs {
		px := make([]float64, len(f.Pix))
		for j, v := range f.Pix {
			px[j] = float64(v) / 255
		}
		c.Frames = append(c.Frames, px)
	}
	p, err := estimator.LookupPreset(estimator.DefaultPreset)
	if err != nil {
		t.Fatal(err)
	}
	r, err := estimator.Fit(ctx, []estimator.Clip{c}, estimator.Options{Preset: p, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	return r, window.Certify(r, window.Thresholds{}, nil)
}

func TestFromResultShowsTheCertificate(t *testing.T) {
	r, v := fitPendulum(t)
	if !v.Certified {
		t.Fatalf("the pendulum window is %s: %v", v.Status, v.Reasons)
	}
	w := FromResult("pendulum", r, v)
	if !w.Covered || len(w.Levels) != shownLevels || len(w.Crossings) != shownLevels {
		t.Fatalf("covered %v, %d levels, %d crossing lists", w.Covered, len(w.Levels), len(w.Crossings))
	}
	if len(w.Fitted) != 1 || len(w.Fitted[0]) != len(w.Latents[0]) {
		t.Fatalf("fitted solution missing or misshaped")
	}
	for i, u := range w.Levels {
		if u <= w.Lo || u >= w.Hi {
			t.Errorf("level %v outside U = [%v, %v]", u, w.Lo, w.Hi)
		}
		// A covered level is crossed at least three times, and each
		// crossing lies on the level: the latent, interpolated linearly
		// at the crossing time, equals u.
		if len(w.Crossings[i]) < 3 {
			t.Errorf("level %v: %d crossings, want ≥ 3 inside U", u, len(w.Crossings[i]))
		}
		for _, c := range w.Crossings[i] {
			z := w.Latents[c.Clip]
			k := int(c.Time / w.Dt)
			f := c.Time/w.Dt - float64(k)
			if at := (1-f)*z[k] + f*z[k+1]; math.Abs(at-u) > 1e-9*(1+math.Abs(u)) {
				t.Errorf("crossing at t=%v: latent %v, level %v", c.Time, at, u)
			}
		}
	}
}

func TestWritePNGAndSVG(t *testing.T) {
	r, v := fitPendulum(t)
	w := FromResult("pendulum", r, v)
	dir := t.TempDir()
	pngPath, svgPath := filepath.Join(dir, "w.png"), filepath.Join(dir, "w.SVG")
	for _, p := range []string{pngPath, svgPath} {
		if err := w.Save(p); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(pngPath)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	if d := img.Bounds().Dx(); d < 500 {
		t.Errorf("PNG is %d px wide", d)
	}
	b, err = os.ReadFile(svgPath)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		XMLName xml.Name
	}
	if err := xml.Unmarshal(b, &doc); err != nil || doc.XMLName.Local != "svg" {
		t.Fatalf("not an SVG document (root %q): %v", doc.XMLName.Local, err)
	}
	if !bytes.Contains(b, []byte("fitted ODE solution")) || !bytes.Contains(b, []byte("covered levels U")) {
		t.Errorf("SVG lacks the legend entries")
	}
}

func TestSaveRefusesUnknownFormat(t *testing.T) {
	err := Window{Dt: 0.1, Latents: [][]float64{{0, 1, 0}}}.Save(filepath.Join(t.TempDir(), "w.jpg"))
	if !errors.Is(err, ErrFormat) {
		t.Fatalf("err = %v, want ErrFormat", err)
	}
}

func TestDegenerateWindowsDoNotPanic(t *testing.T) {
	for _, w := range []Window{
		{},
		{Dt: 0.1, Latents: [][]float64{{}}},
		{Dt: 0.1, Latents: [][]float64{{math.NaN(), math.Inf(1), 1}}, Lo: math.NaN(), Hi: math.NaN()},
	} {
		var buf bytes.Buffer
		_ = w.Write(&buf, "svg")
	}
}
