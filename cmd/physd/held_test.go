package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// A 1 px free decay through x264 (real libx264 via physd sim): at CRF 30
// the codec holds the block still once its swing is below about 0.2 px,
// and the window's refusal says so with the share of held frames; at
// CRF 18 nothing is held and the codec is not named. (What the sweep in
// docs/subpixel-results.md measures across seeds.)
func TestEstimateNamesTheCodecThatHeldTheMotion(t *testing.T) {
	if testing.Short() {
		t.Skip("renders, encodes and estimates two 20 s clips")
	}
	dir := t.TempDir()
	type report struct {
		Certified bool     `json:"certified"`
		Reasons   []string `json:"reasons"`
		Amplitude *struct {
			Px        float64 `json:"px"`
			HeldShare float64 `json:"held_share"`
		} `json:"amplitude"`
	}
	read := func(crf string) report {
		clip := filepath.Join(dir, "b"+crf+".mp4")
		if code, _, e := physd(t, "sim", "--system", "structure", "--seed", "4", "--fn", "2.518", "--zeta", "0.014",
			"--amplitude", "1", "--crf", crf, "--duration", "20", clip); code != exitOK {
			t.Fatalf("sim: exit %d: %s", code, e)
		}
		_, out, e := physd(t, "estimate", "--json", clip)
		var r report
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("CRF %s: JSON: %v\n%s\n%s", crf, err, out, e)
		}
		if r.Amplitude == nil {
			t.Fatalf("CRF %s: no amplitude: %s", crf, out)
		}
		t.Logf("CRF %s: certified %v, amplitude %.3g px, held share %.2f; %s", crf, r.Certified, r.Amplitude.Px, r.Amplitude.HeldShare, strings.Join(r.Reasons, "; "))
		return r
	}
	lossy := read("30")
	if lossy.Amplitude.HeldShare < 0.25 {
		t.Errorf("CRF 30: held share %.2f, want ≥ 0.25 (the block is held still after its swing falls below the quantiser)", lossy.Amplitude.HeldShare)
	}
	if !lossy.Certified && !strings.Contains(strings.Join(lossy.Reasons, "; "), "codec held the moving pixels still") {
		t.Errorf("CRF 30, refused without naming the codec: %q", lossy.Reasons)
	}
	good := read("18")
	if good.Amplitude.HeldShare > 0.05 || strings.Contains(strings.Join(good.Reasons, "; "), "codec held") {
		t.Errorf("CRF 18: held share %.2f, reasons %q; want none held", good.Amplitude.HeldShare, good.Reasons)
	}
}
