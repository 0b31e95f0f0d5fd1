//go:build !nocv

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"math"
	"path/filepath"
	"testing"

	"github.com/physd/physd/sim"
	"github.com/physd/physd/window"
)

// ambientClip renders a 64×64 ambient record of dur seconds through x264
// (CRF 23) and returns its path.
func ambientClip(t *testing.T, s sim.Structure, dur float64) string {
	t.Helper()
	s.W, s.H, s.Duration = 64, 64, dur
	path := filepath.Join(t.TempDir(), "ambient.mp4")
	if _, err := sim.WriteStructureVideo(context.Background(), path, s, sim.Encoding{CRF: 23}); err != nil {
		t.Skipf("cannot encode: %v", err)
	}
	return path
}

func estimateAmbientJSON(t *testing.T, path string) (ambientReport, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	log := slog.New(slog.NewTextHandler(&stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	code, err := cmdEstimate(context.Background(), []string{"--ambient", "--json", path}, &stdout, &stderr, log)
	if err != nil {
		t.Fatalf("physd estimate --ambient: %v\n%s", err, stderr.String())
	}
	var rep ambientReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("%v\n%s", err, stdout.String())
	}
	return rep, code
}

// A sub-pixel mode driven by white noise, read frame by frame through a
// real codec, is certified within its σ of the truth: 2 Hz at ζ = 2 %
// over 15 min (ζωT ≈ 230), where the ambient limits (σ(f_n) ≤ 1/6 %,
// σ(ζ) ≤ 10 %) are met.
func TestEstimateAmbientSubpixelMode(t *testing.T) {
	m := sim.Mode{Fn: 2, Zeta: 0.02, AmplitudePx: 0.5}
	rep, code := estimateAmbientJSON(t, ambientClip(t, sim.Structure{Seed: 2, Excitation: sim.ExcitationAmbient, Modes: []sim.Mode{m}}, 900))
	t.Logf("f %.4f ± %.4f, ζ %.4f ± %.4f, %s %v (%.0f ms)", rep.FreqN, rep.SigmaF, rep.Zeta, rep.SigmaZ, rep.Verdict, rep.Reasons, rep.ElapsedMS)
	if code != exitOK || !rep.Certified {
		t.Fatalf("exit %d, %s: %v", code, rep.Verdict, rep.Reasons)
	}
	if math.Abs(rep.FreqN-m.Fn) > 2*rep.SigmaF || math.Abs(rep.Zeta-m.Zeta) > 2*rep.SigmaZ {
		t.Errorf("certified f %.4f ± %.4f, ζ %.4f ± %.4f: truth (%g, %g) beyond 2σ", rep.FreqN, rep.SigmaF, rep.Zeta, rep.SigmaZ, m.Fn, m.Zeta)
	}
	if rep.Ambient == nil || rep.Ambient.Frames != 27000 || rep.Ambient.Groups < 2 {
		t.Errorf("the report does not say the record: %+v", rep.Ambient)
	}
}

// A machine at fixed speed shaking the structure is not its mode.
func TestEstimateAmbientRefusesHarmonicForcing(t *testing.T) {
	rep, code := estimateAmbientJSON(t, ambientClip(t, sim.Structure{Seed: 3, Excitation: sim.ExcitationAmbient,
		Modes: []sim.Mode{{Fn: 1, Zeta: 0.01, AmplitudePx: 0.1}}, Forcing: &sim.Harmonic{Hz: 1.3, AmplitudePx: 0.5}}, 600))
	t.Logf("f %.4f ζ %.5f: %s %v", rep.FreqN, rep.Zeta, rep.Verdict, rep.Reasons)
	if code != exitNotCertified || rep.Certified {
		t.Fatalf("certified f %.4f Hz under a 1.3 Hz forcing (exit %d)", rep.FreqN, code)
	}
	var broadband bool
	for _, c := range rep.Ambient.Verdict.Checks {
		broadband = broadband || c.Name == window.CheckBroadband && !c.Passed
	}
	if !broadband {
		t.Errorf("refused, but not for the excitation: %v", rep.Reasons)
	}
}
