package main

import (
	"bytes"
	"strings"
	"testing"
)

// The sweep's cells are the issue's: amplitudes 2 … 0.1 px at CRF 18 and
// 30 with their targets, the compressed 5 and 12 px at CRF 38, and the
// other kinds at 1 and 0.5 px, untargeted.
func TestCells(t *testing.T) {
	var sub, comp, kinds, target int
	for _, c := range cells() {
		switch c.group {
		case "sub-pixel":
			sub++
		case "compression":
			comp++
			if c.crf != 38 {
				t.Errorf("compression cell at CRF %d", c.crf)
			}
		default:
			kinds++
			if c.target || c.object == "" || c.crf != 18 {
				t.Errorf("kind cell %+v", c)
			}
		}
		if c.target {
			target++
		}
		if c.crf == 18 && c.ampPx == 0.3 && !c.target || c.crf == 30 && c.ampPx == 0.5 && c.target {
			t.Errorf("cell %+v: wrong target", c)
		}
	}
	if sub != 10 || comp != 4 || kinds != 8 || target != 4+2+4 {
		t.Errorf("%d sub-pixel, %d compression, %d kind, %d targeted cells", sub, comp, kinds, target)
	}
}

// A seed's frequency and damping come from the seed alone and lie in the
// issue's ranges.
func TestDraw(t *testing.T) {
	for seed := 1; seed <= 20; seed++ {
		fn, zeta := draw("sub-pixel", seed)
		if fn < 1 || fn > 3 || zeta < 0.005 || zeta > 0.02 {
			t.Errorf("seed %d: f %v ζ %v", seed, fn, zeta)
		}
		if f2, z2 := draw("sub-pixel", seed); f2 != fn || z2 != zeta {
			t.Errorf("seed %d drew twice differently", seed)
		}
	}
}

func TestAtKeyframe(t *testing.T) {
	for _, tc := range []struct {
		t    float64
		gop  int
		want bool
	}{
		{1.0, 30, true}, {1.5, 30, false}, {250.0 / 30, 0, true}, {4.0, 0, false}, {0, 30, false},
	} {
		if got := atKeyframe(tc.t, tc.gop); got != tc.want {
			t.Errorf("atKeyframe(%v, %d) = %v, want %v", tc.t, tc.gop, got, tc.want)
		}
	}
}

// The report counts a certified estimate outside the bar as false.
func TestReportCountsFalseCertificates(t *testing.T) {
	rows := map[cell][]outcome{}
	c := cells()[0]
	rows[c] = []outcome{
		{seed: 1, est: estimate{Certified: true, Verdict: "certified"}, inBar: true},
		{seed: 2, est: estimate{Certified: true, Verdict: "certified"}, falseOK: true},
	}
	var b bytes.Buffer
	report(&b, config{}, rows, 0)
	if !strings.Contains(b.String(), "False certificates: 1 of 2 estimates") {
		t.Errorf("report:\n%s", b.String())
	}
}
