package estimator

import (
	"context"
	"math"
	"reflect"
	"testing"

	"github.com/physd/physd/sim"
)

// The clips' key frames reach the estimate, per clip, through the
// exposure normalisation (which replaces the frames); clips that tell
// none leave Result.Keys nil.
func TestFitKeepsKeys(t *testing.T) {
	g1, g0 := sim.GroundTruth(sim.RegimeUnderdamped)
	clip := exposureTransient(renderClip(t, sim.Scene{System: sim.SystemPendulum, Gamma1: g1, Gamma0: g0, Z0: 50, Duration: 1.5 * math.Pi, FPS: 20, Size: 64, Seed: 1}), 0.3, 1, 0.4)
	p, err := LookupPreset(DefaultPreset)
	if err != nil {
		t.Fatal(err)
	}
	p.Steps = 0 // the readout as it starts: the keys are all this asks about
	for _, c := range []struct {
		keys    []int
		guessed bool
		want    [][]int
	}{{nil, false, nil}, {[]int{0, 30, 60}, false, [][]int{{0, 30, 60}}}, {[]int{}, false, [][]int{{}}}, {[]int{45}, true, [][]int{{45}}}} {
		clip.Keys, clip.KeysGuessed = c.keys, c.guessed
		r, err := Fit(context.Background(), []Clip{clip}, Options{Preset: p, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if r.Exposure == nil || !r.Exposure.Applied {
			t.Fatalf("the exposure was not normalised: %+v", r.Exposure)
		}
		if !reflect.DeepEqual(r.Keys, c.want) || r.KeysGuessed != c.guessed {
			t.Errorf("clip keys %v (guessed %v): Result.Keys %v (guessed %v)", c.keys, c.guessed, r.Keys, r.KeysGuessed)
		}
	}
}
