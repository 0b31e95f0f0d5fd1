package main

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"testing"
)

// A sub-pixel block released in two modes (1.0 Hz at ζ = 1 %, 0.6 px;
// 2.7 Hz at ζ = 2 %, 0.2 px; 320×240, lossless H.264): physd estimate with no
// flags reports both modes, and each mode it certifies is within the bar
// (γ0 within 1 %, ζ within 25 %) of its truth.
func TestEstimateTwoModes(t *testing.T) {
	if testing.Short() {
		t.Skip("renders and estimates two 20 s clips")
	}
	truth := [2][2]float64{{1.0, 0.01}, {2.7, 0.02}}
	var certified int
	for seed := 1; seed <= 2; seed++ {
		clip := filepath.Join(t.TempDir(), "two.mp4")
		if code, _, e := physd(t, "sim", "--system", "structure", "--modes", "1.0:0.01:0.6,2.7:0.02:0.2", "--duration", "20",
			"--width", "320", "--height", "240", "--seed", fmt.Sprint(seed), clip); code != exitOK {
			t.Fatalf("sim: exit %d: %s", code, e)
		}
		code, out, e := physd(t, "estimate", "--json", clip)
		if code != exitOK && code != exitNotCertified {
			t.Fatalf("estimate: exit %d: %s", code, e)
		}
		var rep estimateReport
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if rep.Modes == nil || len(rep.Modes.Modes) != 2 {
			t.Fatalf("seed %d: modes %+v, want two", seed, rep.Modes)
		}
		for i, m := range rep.Modes.Modes {
			fn, zeta := truth[i][0], truth[i][1]
			inBar := math.Abs(m.FreqN*m.FreqN/(fn*fn)-1) <= 0.01 && math.Abs(m.Zeta/zeta-1) <= 0.25
			t.Logf("seed %d mode %d (%s): %.4f ± %.4f Hz, ζ %.4f ± %.4f, %.3g px: %s %v", seed, m.Index, rep.Modes.Readout, m.FreqN, m.SigmaF, m.Zeta, m.SigmaZ, m.AmplitudePx, m.Verdict, m.Reasons)
			if m.Certified && !inBar {
				t.Errorf("seed %d mode %d: certified outside the bar", seed, m.Index)
			}
			if m.Certified {
				certified++
			}
			if m.Certified != (m.Verdict == "certified") {
				t.Errorf("seed %d mode %d: certified %v, verdict %s", seed, m.Index, m.Certified, m.Verdict)
			}
		}
		if (code == exitOK) != rep.Certified {
			t.Errorf("seed %d: exit %d with the window certified %v: the exit status is the window's", seed, code, rep.Certified)
		}
	}
	if certified < 3 {
		t.Errorf("certified %d of 4 modes, want ≥ 3", certified)
	}
}
