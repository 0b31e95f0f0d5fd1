//go:build !nocv

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/physd/physd/internal/realvid"
)

// roiJSON is the part of the report these tests read.
type roiJSON struct {
	Gamma0, Gamma1 float64
	Certified      bool
	ROI            struct {
		Mode   string
		Region struct{ X, Y, W, H int }
		SrcW   int `json:"src_w"`
		SrcH   int `json:"src_h"`
		OutW   int `json:"out_w"`
		OutH   int `json:"out_h"`
		Search *struct {
			FreqHz float64 `json:"freq_hz"`
			Cells  int
		}
		Fallback string
	}
}

func estimateJSON(t *testing.T, args ...string) (int, roiJSON, string) {
	t.Helper()
	code, out, e := physd(t, append([]string{"estimate", "--json"}, args...)...)
	var r roiJSON
	if code == exitOK || code == exitNotCertified {
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("estimate %v: JSON: %v\n%s", args, err, out)
		}
	}
	return code, r, e
}

// TestEstimateAutoROI: without --roi, a pendulum swinging 6 periods is
// found at its frequency, cropped without distortion at the crop's own
// size (it is smaller than the 64² budget), estimated within the bar and
// certified; the report and the figure say which region was used.
func TestEstimateAutoROI(t *testing.T) {
	dir := t.TempDir()
	clip := filepath.Join(dir, "p.mp4")
	if code, _, e := physd(t, "sim", "--duration", "20", clip); code != exitOK {
		t.Fatalf("sim: exit %d: %s", code, e)
	}
	svg := filepath.Join(dir, "p.svg")
	code, r, e := estimateJSON(t, "--plot", svg, clip)
	if code != exitOK {
		t.Fatalf("estimate: exit %d: %s", code, e)
	}
	fd := math.Sqrt(4.0016-0.08*0.08/4) / (2 * math.Pi)
	g := r.ROI
	if g.Mode != "auto" || g.Search == nil || math.Abs(g.Search.FreqHz-fd) > 0.03*fd {
		t.Fatalf("roi %+v, want auto at %.4f Hz", g, fd)
	}
	if g.Region.X < 0 || g.Region.Y < 0 || g.Region.X+g.Region.W > 64 || g.Region.Y+g.Region.H > 64 || g.Region.W*g.Region.H >= 64*64 {
		t.Errorf("region %+v: want a crop inside the 64×64 frame", g.Region)
	}
	if g.OutW != g.Region.W || g.OutH != g.Region.H || g.SrcW != 64 || g.SrcH != 64 {
		t.Errorf("%+v: a crop under the budget is read at its own size", g)
	}
	if math.Abs(r.Gamma0-4.0016) > 0.005*4.0016 || math.Abs(r.Gamma1-0.08) > 0.004 || !r.Certified {
		t.Errorf("γ0 %.5f, γ1 %.5f, certified %v; truth 4.0016, 0.08", r.Gamma0, r.Gamma1, r.Certified)
	}
	if b, err := os.ReadFile(svg); err != nil || !strings.Contains(string(b), "auto region") || !strings.Contains(string(b), "oscillating cells") {
		t.Errorf("figure %s does not draw the region (%v)", svg, err)
	}
}

// TestEstimateROIModes: --roi auto, full and x,y,w,h on a clip too short
// for a search (1.5 periods): the default falls back to the whole frame
// and says why; auto refuses; a given region is cropped with its aspect
// ratio kept.
func TestEstimateROIModes(t *testing.T) {
	dir := t.TempDir()
	clip := filepath.Join(dir, "p.mp4")
	if code, _, e := physd(t, "sim", "--duration", "1.5pi", clip); code != exitOK {
		t.Fatalf("sim: exit %d: %s", code, e)
	}
	code, r, e := estimateJSON(t, clip)
	if code != exitOK || r.ROI.Mode != "full" || !strings.Contains(r.ROI.Fallback, "no oscillating region") ||
		r.ROI.Region.W != 64 || r.ROI.Region.H != 64 || r.ROI.OutW != 64 || r.ROI.OutH != 64 {
		t.Errorf("default: exit %d, roi %+v (%s)", code, r.ROI, e)
	}
	if code, _, e := estimateJSON(t, "--roi", "auto", clip); code != exitError || !strings.Contains(e, "no oscillating region") {
		t.Errorf("--roi auto: exit %d, stderr %q; want an error saying nothing oscillates", code, e)
	}
	if code, r, e := estimateJSON(t, "--roi", "full", clip); code != exitOK || r.ROI.Mode != "full" || r.ROI.Fallback != "" {
		t.Errorf("--roi full: exit %d, roi %+v (%s)", code, r.ROI, e)
	}
	// A 64×24 band: 2.67:1, so 105×39 pixels at the 64² budget, not 64×64.
	code, r, e = estimateJSON(t, "--roi", "0,20,64,24", clip)
	if code != exitOK && code != exitNotCertified {
		t.Fatalf("--roi 0,20,64,24: exit %d: %s", code, e)
	}
	if g := r.ROI; g.Mode != "given" || g.Region.X != 0 || g.Region.Y != 20 || g.Region.W != 64 || g.Region.H != 24 || g.OutW != 105 || g.OutH != 39 {
		t.Errorf("--roi 0,20,64,24: roi %+v, want given, 105×39", g)
	}
	if code, _, e := estimateJSON(t, "--roi", "somewhere", clip); code != exitUsage || !strings.Contains(e, "auto") {
		t.Errorf("--roi somewhere: exit %d, stderr %q", code, e)
	}
}

// TestRealFootageAutoROI runs the dev set's springWars case without its
// --roi: the region is found automatically (a cart on a table, a person at
// a desk, a passer-by late in the window) and the estimate must be what the
// case expects, judged as TestRealFootage judges the listed flags.
func TestRealFootageAutoROI(t *testing.T) {
	dir := realvidDir(t)
	all, err := realvid.ParseFile(filepath.Join(dir, "truth.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	cases, err := realvid.Select(all, []string{"springWars"})
	if err != nil {
		t.Fatal(err)
	}
	c := cases[0]
	args := append(append([]string{"--json"}, realvid.WithoutROI(c.Args)...), c.Path(dir))
	var stdout, stderr bytes.Buffer
	log := slog.New(slog.NewTextHandler(&stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	code, err := cmdEstimate(context.Background(), args, &stdout, &stderr, log)
	if err != nil {
		t.Fatalf("physd estimate %q: %v\n%s", args, err, stderr.String())
	}
	var rep estimateReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("JSON: %v\n%s", err, stdout.String())
	}
	if rep.ROI == nil || rep.ROI.Mode != roiAuto || rep.ROI.Search == nil {
		t.Fatalf("region %+v: want one found automatically", rep.ROI)
	}
	t.Logf("region %s; γ0 %.4f ± %.4f, γ1 %.4f ± %.4f, %s %q (exit %d)", rep.ROI.summary(), rep.Gamma0, rep.Sigma0, rep.Gamma1, rep.Sigma1, rep.Verdict, rep.Reasons, code)
	j := c.Judge(realvid.Outcome{Certified: rep.Certified, Gamma0: rep.Gamma0, Gamma1: rep.Gamma1, Sigma0: rep.Sigma0, Sigma1: rep.Sigma1})
	if j.FalseCertificate || !j.AsExpected {
		t.Errorf("%s without --roi: %s, γ0 %.4f, γ1 %.4f (within tolerance %v); truth.tsv line %d expects %s",
			c.Name, rep.Verdict, rep.Gamma0, rep.Gamma1, j.WithinTolerance, c.Line, c.Expect)
	}
}
