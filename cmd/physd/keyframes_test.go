package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/physd/physd/window"
)

// Issue 44's compressed camera: a 20 s free decay of a block swinging
// 12 px at 2 Hz with ζ 1 %, encoded by x264 at CRF 38 with a key frame
// every 30 and every 250 frames, estimated by `physd estimate --json`
// with no other flag, is certified within the bar (γ0 within
// 1 %, γ1 within 20 % + 0.02) and its impulse check passes: a key frame's
// re-coding of the picture is no knock.
func TestEstimateCompressedKeyFrames(t *testing.T) {
	if testing.Short() {
		t.Skip("two 20 s clips rendered, encoded and estimated")
	}
	for _, gop := range []int{30, 250} {
		t.Run("GOP "+strconv.Itoa(gop), func(t *testing.T) {
			dir := t.TempDir()
			clip := filepath.Join(dir, "block.mp4")
			if code, _, e := physd(t, "sim", "--system", "structure", "--amplitude", "12", "--fn", "2", "--zeta", "0.01",
				"--crf", "38", "--gop", strconv.Itoa(gop), clip); code != exitOK {
				t.Fatalf("sim: exit %d: %s", code, e)
			}
			b, err := os.ReadFile(filepath.Join(dir, "block.truth.json"))
			if err != nil {
				t.Fatal(err)
			}
			var truth struct {
				Gamma0 float64 `json:"gamma0"`
				Gamma1 float64 `json:"gamma1"`
			}
			if err := json.Unmarshal(b, &truth); err != nil {
				t.Fatal(err)
			}
			code, out, e := physd(t, "estimate", "--json", clip)
			var r struct {
				Gamma0      float64  `json:"gamma0"`
				Gamma1      float64  `json:"gamma1"`
				Certified   bool     `json:"certified"`
				Reasons     []string `json:"reasons"`
				Diagnostics struct {
					Readout string         `json:"readout"`
					Impulse window.Impulse `json:"impulse"`
					Checks  []window.Check `json:"checks"`
				} `json:"diagnostics"`
			}
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatalf("estimate: exit %d: %v\n%s\n%s", code, err, e, out)
			}
			im := r.Diagnostics.Impulse
			t.Logf("γ0 %.4f (truth %.4f), γ1 %.4f (truth %.4f), certified %v, readout %s, impulse %.1f at %.2f s, at a key frame %.1f at %.2f s; reasons %q",
				r.Gamma0, truth.Gamma0, r.Gamma1, truth.Gamma1, r.Certified, r.Diagnostics.Readout, im.Ratio, im.At, im.KeyRatio, im.KeyAt, r.Reasons)
			if !r.Certified || code != exitOK {
				t.Errorf("not certified (exit %d): %q", code, r.Reasons)
			}
			if math.Abs(r.Gamma0-truth.Gamma0) > 0.01*truth.Gamma0 || math.Abs(r.Gamma1-truth.Gamma1) > 0.2*truth.Gamma1+0.02 {
				t.Errorf("γ0 %.4f, γ1 %.4f outside the bar around (%.4f, %.4f)", r.Gamma0, r.Gamma1, truth.Gamma0, truth.Gamma1)
			}
			for _, c := range r.Diagnostics.Checks {
				if c.Name == window.CheckImpulse && !c.Passed {
					t.Errorf("impulse check failed: %s", c.Detail)
				}
			}
		})
	}
}
