package figure

import (
	"bytes"
	"image/png"
	"strings"
	"testing"
)

// TestSceneBesideTheLatent: with a Scene the figure grows a panel on the
// left with the camera picture and the region (its key in the title); a
// Scene that does not describe a picture is left out, never drawn wrong.
func TestSceneBesideTheLatent(t *testing.T) {
	w := Window{Title: "t", Dt: 0.05, Latents: [][]float64{{0, 1, 0, -1, 0, 1, 0, -1}}, Verdict: "not-certified"}
	var plain bytes.Buffer
	if err := w.Write(&plain, "png"); err != nil {
		t.Fatal(err)
	}
	pix := make([]byte, 16*12)
	for i := range pix {
		pix[i] = byte(i)
	}
	w.Scene = &Scene{W: 16, H: 12, Pix: pix, SrcW: 640, SrcH: 480, Region: [4]int{100, 200, 300, 50},
		Active: &[4]int{120, 210, 260, 30}, Label: "auto region (0.5 Hz)"}
	var svg bytes.Buffer
	if err := w.Write(&svg, "svg"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"640×480 frame", "red: auto region (0.5 Hz)", "yellow: oscillating cells", "latent z"} {
		if !strings.Contains(svg.String(), want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
	var both bytes.Buffer
	if err := w.Write(&both, "png"); err != nil {
		t.Fatal(err)
	}
	a, err1 := png.DecodeConfig(&plain)
	b, err2 := png.DecodeConfig(&both)
	if err1 != nil || err2 != nil || b.Width <= a.Width || b.Height != a.Height {
		t.Errorf("with a scene %d×%d, without %d×%d (%v, %v): want a wider figure of the same height", b.Width, b.Height, a.Width, a.Height, err1, err2)
	}
	w.Scene.Pix = pix[:10] // not a 16×12 picture
	if _, err := w.Scene.Plot(); err == nil {
		t.Error("Scene.Plot accepted 10 pixels for a 16×12 picture")
	}
	var again bytes.Buffer
	if err := w.Write(&again, "png"); err != nil {
		t.Fatal(err)
	}
	if c, err := png.DecodeConfig(&again); err != nil || c.Width != a.Width {
		t.Errorf("an invalid scene changed the figure: %d wide (%v), want %d", c.Width, err, a.Width)
	}
}
