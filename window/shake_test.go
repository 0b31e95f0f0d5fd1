package window

import (
	"math"
	"strings"
	"testing"

	"github.com/physd/physd/estimator"
	"github.com/physd/physd/motion"
)

// follow is the R² of the latent on the camera's shift, with an offset per
// clip.
func TestFollow(t *testing.T) {
	const n = 200
	var z, other [][]float64
	var s [][]motion.Shift
	for c := range 2 {
		var zc, oc []float64
		var sc []motion.Shift
		for k := range n {
			x := math.Sin(float64(k) / 7)
			y := math.Cos(float64(k) / 11)
			sc = append(sc, motion.Shift{X: x, Y: y})
			zc = append(zc, 3*x-2*y+float64(c)*10)    // a linear function of the shift
			oc = append(oc, math.Sin(float64(k)/2.3)) // unrelated
		}
		z, other, s = append(z, zc), append(other, oc), append(s, sc)
	}
	if f, ok := follow(z, s); !ok || math.Abs(f-1) > 1e-9 {
		t.Errorf("latent = 3x − 2y + offset: R² %v (ok %v), want 1", f, ok)
	}
	if f, ok := follow(other, s); !ok || f > 0.1 {
		t.Errorf("unrelated latent: R² %v (ok %v), want about 0", f, ok)
	}
	if _, ok := follow(z[:1], s); ok {
		t.Error("one clip of latents against two of shifts accepted")
	}
	// A shake along one axis only: the collinear branch.
	one := make([]motion.Shift, n)
	lat := make([]float64, n)
	for k := range n {
		one[k] = motion.Shift{X: math.Sin(float64(k) / 7)}
		lat[k] = 2 * one[k].X
	}
	if f, ok := follow([][]float64{lat}, [][]motion.Shift{one}); !ok || math.Abs(f-1) > 1e-9 {
		t.Errorf("horizontal shake: R² %v (ok %v), want 1", f, ok)
	}
}

// A window whose latent follows the camera's detected motion is refused
// with a reason; one whose latent does not, or whose camera did not move,
// or whose motion cannot be told from the object's, is not refused for it.
func TestCameraCheck(t *testing.T) {
	const n = 150
	shifts := make([]motion.Shift, n)
	z := make([]float64, n)
	obj := make([]float64, n)
	for k := range n {
		shifts[k] = motion.Shift{X: 4 * math.Sin(float64(k)/5), Y: math.Cos(float64(k) / 9)}
		z[k] = shifts[k].X
		obj[k] = math.Sin(float64(k) / 3.1)
	}
	track := func(detected, applied, ambiguous bool) *motion.Track {
		return &motion.Track{Source: motion.SourceAuto, Shifts: [][]motion.Shift{shifts}, RMS: 3, Detected: detected, Applied: applied, Ambiguous: ambiguous}
	}
	for _, c := range []struct {
		name   string
		z      []float64
		tr     *motion.Track
		refuse bool
	}{
		{"follows the shake", z, track(true, false, false), true},
		{"follows it after removal", z, track(true, true, false), true},
		{"follows the object", obj, track(true, true, false), false},
		{"camera still", z, track(false, false, false), false},
		{"ambiguous", z, track(true, false, true), false},
	} {
		r := &estimator.Result{Latents: [][]float64{c.z}}
		chk, reason := testCamera(r, c.tr)
		if chk == nil {
			t.Fatalf("%s: no check", c.name)
		}
		if got := reason != ""; got != c.refuse {
			t.Errorf("%s: refused %v (%q, follow %.2f), want %v", c.name, got, reason, chk.Follow, c.refuse)
		}
		if c.refuse && !strings.Contains(reason, "camera") {
			t.Errorf("%s: reason %q does not name the camera", c.name, reason)
		}
	}
	// A readout that saw frames 30–119 (an object hidden before and
	// after) is compared with the camera's motion over those frames.
	part := &estimator.Result{Latents: [][]float64{z[30:120]}, First: []int{30}}
	if chk, reason := testCamera(part, track(true, false, false)); reason == "" || math.Abs(chk.Follow-1) > 1e-9 {
		t.Errorf("part of the clip following the shake: refused %q, follow %.3f", reason, chk.Follow)
	}
	part.Latents = [][]float64{obj[30:120]}
	if _, reason := testCamera(part, track(true, true, false)); reason != "" {
		t.Errorf("part of the clip following the object: refused %q", reason)
	}
	if chk, reason := testCamera(&estimator.Result{}, nil); chk != nil || reason != "" {
		t.Errorf("no track: %v %q", chk, reason)
	}
}
