//go:build !nocv

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/physd/physd/internal/physdtest"
	"github.com/physd/physd/internal/realvid"
)

// realvidDir finds the real-footage dev set, ../shared/realvid beside the
// repository (the directory holding go.mod); the test is skipped, naming
// the path, when it is not there.
func realvidDir(t *testing.T) string {
	t.Helper()
	dir := physdtest.RepoRoot(t)
	rv := filepath.Join(filepath.Dir(dir), "shared", "realvid")
	if _, err := os.Stat(filepath.Join(rv, "truth.tsv")); errors.Is(err, os.ErrNotExist) {
		t.Skipf("the real-footage dev set is not here: %s does not exist", filepath.Join(rv, "truth.tsv"))
	} else if err != nil {
		t.Fatal(err)
	}
	return rv
}

// TestRealFootage runs 'physd estimate --json' in process on short cases
// of the real-footage dev set and judges each against truth.tsv: the
// expectation and tolerances are the table's.
func TestRealFootage(t *testing.T) {
	dir := realvidDir(t)
	all, err := realvid.ParseFile(filepath.Join(dir, "truth.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	cases, err := realvid.Select(all, []string{"ballOil_under_one_period", "springWars"})
	if err != nil {
		t.Fatal(err)
	}
	// A case slower than this is skipped with -short (the time of its last
	// run on a 2-core amd64 machine is in the comment).
	const slow = 20 * time.Second
	typical := map[string]time.Duration{
		"ballOil_under_one_period": 1 * time.Second, // 25 frames
		"springWars":               2 * time.Second, // 240 frames
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			if testing.Short() && typical[c.Name] > slow {
				t.Skipf("-short: takes about %s", typical[c.Name])
			}
			video := c.Path(dir)
			if _, err := os.Stat(video); err != nil {
				t.Fatalf("truth.tsv line %d: %v", c.Line, err)
			}
			args := append(append([]string{"--json"}, c.Args...), video)
			var stdout, stderr bytes.Buffer
			log := slog.New(slog.NewTextHandler(&stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
			start := time.Now()
			code, err := cmdEstimate(context.Background(), args, &stdout, &stderr, log)
			took := time.Since(start)
			if took > slow && typical[c.Name] <= slow {
				t.Logf("took %s, over %s: update its time in typical so -short skips it", took.Round(time.Second), slow)
			}
			if err != nil {
				t.Fatalf("physd estimate %q: %v\n%s", args, err, stderr.String())
			}
			var rep estimateReport
			if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
				t.Fatalf("JSON: %v\n%s", err, stdout.String())
			}
			if want := map[bool]int{true: exitOK, false: exitNotCertified}[rep.Certified]; code != want {
				t.Errorf("exit %d with certified=%v, want %d", code, rep.Certified, want)
			}
			o := realvid.Outcome{Certified: rep.Certified, Gamma0: rep.Gamma0, Gamma1: rep.Gamma1, Sigma0: rep.Sigma0, Sigma1: rep.Sigma1}
			j := c.Judge(o)
			t.Logf("%s (expect %s; truth γ0 %g ± %g%%, γ1 %g ± %g; 0: none): γ0 %.4f ± %.4f, γ1 %.4f ± %.4f, ζ %.4f (%s), %s %q; within tolerance %v; in %s",
				c.Name, c.Expect, c.Gamma0, 100*c.Gamma0TolRel, c.Gamma1, c.Gamma1TolAbs,
				rep.Gamma0, rep.Sigma0, rep.Gamma1, rep.Sigma1, rep.Zeta, rep.Regime, rep.Verdict, rep.Reasons,
				j.WithinTolerance, took.Round(time.Millisecond))
			if j.FalseCertificate {
				t.Errorf("%s: false certificate: certified γ0 %.4f, γ1 %.4f; truth.tsv line %d expects %s (γ0 %g ± %g%%, γ1 %g ± %g)",
					c.Name, rep.Gamma0, rep.Gamma1, c.Line, c.Expect, c.Gamma0, 100*c.Gamma0TolRel, c.Gamma1, c.Gamma1TolAbs)
			} else if !j.AsExpected {
				t.Errorf("%s: %s (γ0 %.4f, γ1 %.4f, within tolerance %v), truth.tsv line %d expects %s: %q",
					c.Name, rep.Verdict, rep.Gamma0, rep.Gamma1, j.WithinTolerance, c.Line, c.Expect, rep.Reasons)
			}
		})
	}
}
