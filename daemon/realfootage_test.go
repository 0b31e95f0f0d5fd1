//go:build !nocv

package daemon

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/physd/physd/config"
	"github.com/physd/physd/internal/physdtest"
	"github.com/physd/physd/internal/realvid"
	"github.com/physd/physd/wire"
)

// realCase finds a case of the real-footage dev set (../shared/realvid
// beside the repository) and its video, or skips the test naming the path.
func realCase(t *testing.T, name string) (realvid.Case, string) {
	t.Helper()
	dir := filepath.Join(filepath.Dir(physdtest.RepoRoot(t)), "shared", "realvid")
	table := filepath.Join(dir, "truth.tsv")
	if _, err := os.Stat(table); err != nil {
		t.Skipf("the real-footage dev set is not here: %v", err)
	}
	all, err := realvid.ParseFile(table)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := realvid.Select(all, []string{name})
	if err != nil {
		t.Fatal(err)
	}
	return cs[0], cs[0].Path(dir)
}

// roiOf reads the --roi flag of a dev-set case.
func roiOf(t *testing.T, args []string) config.ROI {
	t.Helper()
	for i, a := range args {
		if a != "--roi" || i+1 >= len(args) {
			continue
		}
		var v [4]int
		parts := strings.Split(args[i+1], ",")
		if len(parts) != 4 {
			t.Fatalf("--roi %q: want x,y,w,h", args[i+1])
		}
		for j, p := range parts {
			n, err := strconv.Atoi(p)
			if err != nil {
				t.Fatalf("--roi %q: %v", args[i+1], err)
			}
			v[j] = n
		}
		return config.ROI{X: v[0], Y: v[1], W: v[2], H: v[3]}
	}
	t.Fatalf("no --roi in %v", args)
	return config.ROI{}
}

// TestRealFootageFileCamera replays a real recording (springWars.mp4: a
// cart between two springs, a hand at the start, a passer-by near the end,
// dry friction) from a file camera in real time, looped, through the whole
// daemon with its 8 s sliding windows, and checks what a NATS subscriber
// gets: certified estimates, every one of them within the dev set's
// tolerance for the whole free swing (γ0 within 2 %; γ1 within the range a
// linear model of this friction-damped cart can defend). Windows that
// straddle the hand, the stop or the loop's seam must be refused, not
// certified wrong: every certified estimate is checked, none skipped.
func TestRealFootageFileCamera(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the daemon on a real recording for about a minute")
	}
	if raceEnabled {
		t.Skip("a real-time stream: under the race detector the estimator falls behind it (the run without -race tests it)")
	}
	tc, path := realCase(t, "springWars_whole_swing")
	cfg := testConfig()
	cam := config.DefaultCamera()
	cam.Name = "cart"
	cam.Source.Kind = config.KindFile
	cam.Source.Path = path
	cam.Source.Realtime = true
	cam.Source.Loop = true
	cam.ROI = roiOf(t, tc.Args)
	cam.Window = config.WindowOverride{Length: 8 * time.Second, Hop: time.Second}
	cfg.Cameras = []config.Camera{cam}
	r := start(t, cfg, t.TempDir())
	c := collect(t, r.d)

	const want = 3
	waitFor(t, 120*time.Second, "certified estimates from the real recording", func() bool {
		return len(c.kind(wire.KindEstimate)) >= want
	})
	refused := 0
	for _, m := range c.kind(wire.KindDiagnostic) {
		var d wire.Diagnostic
		if json.Unmarshal(m.Data, &d) == nil && !d.Certified && d.Verdict != "skipped" {
			refused++
		}
	}
	bad := 0
	es := estimates(t, c)
	for _, e := range es {
		ok := tc.WithinTolerance(e.Gamma0, e.Gamma1)
		t.Logf("certified γ0 %.4f ± %.4f γ1 %.4f ± %.4f (%d frames, readout %s) within tolerance: %v", e.Gamma0, e.Gamma0Sigma, e.Gamma1, e.Gamma1Sigma, e.Frames, e.Certificate.Readout, ok)
		if !ok {
			bad++
			b, _ := json.Marshal(e.Certificate)
			t.Logf("its certificate: %s", b)
		}
	}
	t.Logf("%d certified estimates, %d false certificates, %d windows refused", len(es), bad, refused)
	if bad > 0 {
		t.Errorf("%d of %d certified estimates outside the tolerance (γ0 %.4g ± %.0f %%, γ1 %.3g ± %.2g)", bad, len(es), tc.Gamma0, 100*tc.Gamma0TolRel, tc.Gamma1, tc.Gamma1TolAbs)
	}
	if refused == 0 {
		t.Errorf("no window refused, but windows straddling the hand, the stop and the loop's seam cannot be certified")
	}
}
