package window

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/physd/physd/estimator"
	"github.com/physd/physd/frame"
)

// keyedLatents are a free decay at 30 fps disturbed at sample `at` the
// way a readout can be at a key frame, and beyond anything the impulse
// test lets pass: the velocity jumps by twice the peak velocity
// ("pushed"), or the position steps by a fifth of the amplitude and the
// velocity jumps with it ("stepped").
func keyedLatents() (dt float64, at int, zs map[string][]float64) {
	const fps, n, w, zeta = 30.0, 240, 2 * math.Pi, 0.01
	dt, at = 1/fps, 100
	free := func(tt, a, v float64) float64 { return exactSolution(2*zeta*w, w*w, a, v, []float64{tt})[0] }
	zs = map[string][]float64{"pushed": make([]float64, n), "stepped": make([]float64, n)}
	for k := range n {
		zs["pushed"][k] = free(float64(k)*dt, 1, 0)
		zs["stepped"][k] = zs["pushed"][k]
	}
	x0 := zs["pushed"][at]
	v0 := (zs["pushed"][at+1]-zs["pushed"][at-1])/(2*dt) + 2*w
	for k := at; k < n; k++ {
		tt := float64(k-at) * dt
		zs["pushed"][k] = free(tt, x0, v0)
		zs["stepped"][k] = free(tt, x0-0.2, v0)
	}
	return dt, at, zs
}

// A velocity jump, or a step with one, at a key frame or a frame next
// to it is set aside; the same jump a few frames from any key frame is
// still an impulse, and so is one in an intra-only stream (every other
// frame a key frame here), where no key frame stands out.
func TestImpulseAtKeyFrame(t *testing.T) {
	dt, at, zs := keyedLatents()
	every := func(step int) []int {
		var k []int
		for i := 0; i < len(zs["pushed"]); i += step {
			k = append(k, i)
		}
		return k
	}
	for name, z := range zs {
		for _, c := range []struct {
			keys []int
			want bool // an impulse is reported
		}{
			{nil, true},
			{[]int{0, at, 200}, false},
			{[]int{0, at - 1}, false},
			{[]int{0, at + 1}, false},
			{[]int{0, at + 4, 200}, true},
			{[]int{}, true},
			{every(2), true},
		} {
			r := resultOf(t, z, dt, [2][2]float64{})
			if c.keys != nil {
				r.Keys = [][]int{c.keys}
			}
			tr, err := NewTrace(r)
			if err != nil {
				t.Fatal(err)
			}
			im := testImpulse(r.Trajectory, tr, keyFramesOf(r))
			t.Logf("%-7s keys %v: impulse %.1f at %.2f s, at a key frame %.1f at %.2f s", name, short(c.keys), im.Ratio, im.At, im.KeyRatio, im.KeyAt)
			if got := im.Ratio > maxImpulse; got != c.want {
				t.Errorf("%s, keys %v: impulse %.1f at %.2f s, flagged %v, want %v", name, short(c.keys), im.Ratio, im.At, got, c.want)
			}
			if !c.want && !(im.KeyRatio > maxImpulse) {
				t.Errorf("%s, keys %v: the jump set aside at a key frame is %.1f, want it reported above %g", name, short(c.keys), im.KeyRatio, maxImpulse)
			}
		}
	}
}

func short(k []int) []int {
	if len(k) > 4 {
		return k[:4]
	}
	return k
}

// Certify passes the impulse check of a jump at a key frame and says
// what it set aside, whether the decoder told the key frame or it was
// guessed; without key frames it refuses the window for the impulse.
func TestCertifyImpulseAtKeyFrame(t *testing.T) {
	dt, at, zs := keyedLatents()
	impulse := func(v Verdict) Check {
		for _, c := range v.Checks {
			if c.Name == CheckImpulse {
				return c
			}
		}
		t.Fatal("no impulse check")
		return Check{}
	}
	r := resultOf(t, zs["pushed"], dt, [2][2]float64{})
	if c := impulse(Certify(r, Thresholds{}, nil)); c.Passed || !strings.Contains(c.Detail, "an impulse at") {
		t.Errorf("no key frames: impulse check %+v, want failed for an impulse", c)
	}
	for _, guessed := range []bool{false, true} {
		r.Keys, r.KeysGuessed = [][]int{{0, at}}, guessed
		v := Certify(r, Thresholds{}, nil)
		c := impulse(v)
		t.Logf("guessed %v: %+v", guessed, c)
		if !c.Passed || !strings.Contains(c.Detail, "key frame") || strings.Contains(c.Detail, "guessed") != guessed {
			t.Errorf("key frame at %d (guessed %v): impulse check %+v, want passed with a note on the key frame", at, guessed, c)
		}
		for _, why := range v.Reasons {
			if strings.Contains(why, "key frame") {
				t.Errorf("a passed check's note is among the reasons: %q", why)
			}
		}
	}
}

// Choose lends the encoder fit's key frames to the readouts fitted from
// latents alone, without changing them.
func TestChooseLendsKeys(t *testing.T) {
	dt, at, zs := keyedLatents()
	enc := resultOf(t, zs["pushed"], dt, [2][2]float64{})
	enc.Keys = [][]int{{0, at}}
	other := resultOf(t, zs["pushed"], dt, [2][2]float64{})
	other.Readout = "tracked"
	_, v := Choose([]*estimator.Result{enc, other}, Thresholds{}, nil)
	all := append([]string{}, v.Reasons...)
	for _, a := range v.Alternatives {
		all = append(all, a.Reasons...)
	}
	for _, why := range all {
		if strings.Contains(why, "an impulse at") {
			t.Errorf("a readout was refused for the jump at the key frame: %q", why)
		}
	}
	if other.Keys != nil {
		t.Error("Choose changed a candidate's Keys")
	}
	if got := withKeys(other, enc); got == other || !reflect.DeepEqual(got.Keys, enc.Keys) {
		t.Errorf("withKeys: %v, want a copy with the encoder's keys", got.Keys)
	}
	if got := withKeys(enc, other); got != enc {
		t.Error("withKeys replaced a fit's own keys")
	}
}

// KeysOf lists the key frames of a source that tells them or guesses
// them, and nil for one that does neither; ClipOf carries them.
func TestKeysOf(t *testing.T) {
	mk := func(known, guessed bool, keys ...int) []frame.Frame {
		fs := make([]frame.Frame, 6)
		for i := range fs {
			fs[i] = frame.Frame{W: 1, H: 1, Pix: []float64{0}, KeyKnown: known}
		}
		for _, k := range keys {
			fs[k].Key, fs[k].KeyGuessed = true, guessed
		}
		return fs
	}
	for _, c := range []struct {
		name    string
		frames  []frame.Frame
		want    []int
		guessed bool
	}{
		{"unknown", mk(false, false), nil, false},
		{"told", mk(true, false, 0, 3), []int{0, 3}, false},
		{"told, none", mk(true, false), []int{}, false},
		{"guessed", mk(false, true, 4), []int{4}, true},
	} {
		keys, guessed := KeysOf(c.frames)
		if !reflect.DeepEqual(keys, c.want) || guessed != c.guessed {
			t.Errorf("%s: KeysOf = %v, %v; want %v, %v", c.name, keys, guessed, c.want, c.guessed)
		}
		if cl := ClipOf(c.frames, 0.1); !reflect.DeepEqual(cl.Keys, c.want) || cl.KeysGuessed != c.guessed {
			t.Errorf("%s: ClipOf's keys %v, %v; want %v, %v", c.name, cl.Keys, cl.KeysGuessed, c.want, c.guessed)
		}
	}
}
