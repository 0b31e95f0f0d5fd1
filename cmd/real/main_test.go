package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakePhysd is a stand-in for 'physd estimate': it writes the --plot
// file and answers by the video's name; a run without --roi reads γ0 10 %
// high.
const fakePhysd = `#!/bin/sh
plot=""; roi=0
while [ $# -gt 1 ]; do
	case "$1" in
	--plot) plot="$2"; shift ;;
	--roi) roi=1; shift ;;
	esac
	shift
done
video=$(basename "$1")
g0=10; [ $roi = 1 ] || g0=11
region='"roi": {"mode": "given", "region": {"x": 0, "y": 0, "w": 10, "h": 10}, "out_w": 64, "out_h": 64}'
[ $roi = 1 ] || region='"roi": {"mode": "auto", "region": {"x": 1, "y": 2, "w": 30, "h": 4}, "out_w": 30, "out_h": 4, "search": {"freq_hz": 1.5}}'
[ -n "$plot" ] && printf 'PNG' > "$plot"
case "$video" in
good.mp4) echo "{\"gamma0\": $g0, \"gamma1\": 0.5, \"gamma0_sigma\": 0.1, \"gamma1_sigma\": 0.1, \"zeta\": 0.08, \"regime\": \"underdamped\", \"verdict\": \"certified\", \"certified\": true, \"unknown\": [1], $region}" ;;
short.mp4) echo '{"gamma0": 3, "gamma1": 1, "gamma0_sigma": 1, "gamma1_sigma": 1, "verdict": "not-certified", "certified": false, "reasons": ["no coverage | at all"]}'; exit 3 ;;
liar.mp4) echo '{"gamma0": 3, "gamma1": 1, "gamma0_sigma": 1, "gamma1_sigma": 1, "verdict": "certified", "certified": true}' ;;
bad.mp4) echo '{"gamma0": 3,'; exit 3 ;;
partial.mp4) echo '{"gamma1": 1, "verdict": "certified", "certified": true}' ;;
mismatch.mp4) echo '{"gamma0": 10, "gamma1": 0.5, "gamma0_sigma": 1, "gamma1_sigma": 1, "verdict": "not-certified", "certified": false}' ;;
precise.mp4) echo "{\"gamma0\": $g0, \"gamma1\": 0.5, \"gamma0_sigma\": 0.1, \"gamma1_sigma\": 0.1, \"verdict\": \"certified\", \"certified\": true, \"diagnostics\": {\"identified\": true, \"precision\": {\"rel_sigma_fn\": 0.0013, \"sigma_zeta\": 0.0012, \"limit_rel_sigma_fn\": 0.01, \"limit_sigma_zeta\": 0.026, \"holds\": true, \"data_factor\": 0.02}}}" ;;
imprecise.mp4) echo "{\"gamma0\": $g0, \"gamma1\": 0.5, \"gamma0_sigma\": 0.3, \"gamma1_sigma\": 0.1, \"verdict\": \"not-certified\", \"certified\": false, \"reasons\": [\"imprecise: σ(f_n) is 3% of f_n\"], \"diagnostics\": {\"identified\": true, \"precision\": {\"rel_sigma_fn\": 0.03, \"sigma_zeta\": 0.02, \"limit_rel_sigma_fn\": 0.01, \"limit_sigma_zeta\": 0.0075, \"holds\": false, \"data_factor\": 9, \"window_needed_s\": 42.4}}}"; exit 3 ;;
nullsigma.mp4) echo '{"gamma0": 3, "gamma1": 1, "gamma0_sigma": 1, "gamma1_sigma": 1, "verdict": "not-certified", "certified": false, "diagnostics": {"identified": false, "precision": {"rel_sigma_fn": null, "sigma_zeta": null, "limit_rel_sigma_fn": 0.01, "limit_sigma_zeta": 0.005, "holds": false, "data_factor": null}}}'; exit 3 ;;
inconsistent.mp4) echo '{"gamma0": 10, "gamma1": 0.5, "gamma0_sigma": 1, "gamma1_sigma": 1, "verdict": "certified", "certified": true, "diagnostics": {"identified": false, "precision": {"holds": true}}}' ;;
*) echo "physd: starting" >&2; echo "physd: estimate: $video: no such file" >&2; exit 1 ;;
esac
`

func TestReal(t *testing.T) {
	dir, bin, data := fakeDevSet(t)
	table := "# name\tfile\tflags\texpect\tgamma0\tgamma0_tol_rel\tgamma1\tgamma1_tol_abs\n" +
		"good\tgood.mp4\t--from 1 --roi 0,0,10,10\tcertified\t10\t0.02\t0.5\t0.1\n" +
		"short\tshort.mp4\t--roi 0,0,10,10\tnot-certified\t0\t0\t0\t0\n" +
		"liar\tliar.mp4\t--roi 0,0,10,10\tnot-certified\t0\t0\t0\t0\n" +
		"bad\tbad.mp4\t\tany\t10\t0.02\t0\t0\n" +
		"partial\tpartial.mp4\t\tany\t10\t0.02\t0\t0\n" +
		"mismatch\tmismatch.mp4\t\tcertified\t10\t0.02\t0.5\t0.1\n" +
		"missing\tmissing.mp4\t\tcertified\t10\t0.02\t0.5\t0.1\n"
	writeTruth(t, data, table)
	out := filepath.Join(dir, "docs", "real-results.md")
	plots := filepath.Join(dir, "docs", "real-plots")
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"-bin", bin, "-dir", data, "-out", out, "-plots", plots, "-jobs", "2"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	md := string(b)
	t.Log(stdout.String())
	for _, want := range []string{
		"# Real footage",
		"- cases as expected (listed flags): 2/7\n", // good, short
		"- certified within tolerance: 1/3 of the cases expected certified (listed flags; no ROI: 0/3)\n",
		"- false certificates: 1 (listed flags) / 2 (no ROI)\n", // liar; liar and good at 11
		"- no ROI: γ0 within 2 % on 0/3 of the cases expected certified (certified or not)\n",
		// γ0 truths: good (in), mismatch, missing (errors) excluded; γ1: good (in)
		"listed flags |γ0−γ0*| ≤ 2σ0 in 1/1 (100 %), |γ1−γ1*| ≤ 2σ1 in 1/1 (100 %); no ROI |γ0−γ0*| ≤ 2σ0 in 0/1 (0 %), |γ1−γ1*| ≤ 2σ1 in 1/1 (100 %)",
		"- runs that failed (no estimate): 4 (listed flags) / 4 (no ROI)\n",
		"| good | certified | 10 ± 2 % / 0.5 ± 0.1 | 10.0000 ± 0.1000 | 0.5000 ± 0.1000 | +0.00 % | 0.0800 (underdamped) | certified | — | yes | given 0,0,10,10 → 64×64 |",
		"| good | certified | 10 ± 2 % / 0.5 ± 0.1 | 11.0000 ± 0.1000 | 0.5000 ± 0.1000 | +10.00 % | 0.0800 (underdamped) | certified | — | **no: false certificate** | auto 1,2,30,4 → 30×4 (1.5 Hz) |",
		`no coverage \| at all |`,
		"| liar | not-certified | — / — | 3.0000 ± 1.0000 |",
		"| bad | any | 10 ± 2 % / — | — | — | — | — | error | — | no (error) |",
		"bad JSON on stdout: unexpected EOF",
		`bad JSON on stdout: no "gamma0"`,
		"exit status 0 but the JSON says certified=false",
		"exit status 1: physd: estimate: missing.mp4: no such file |",
		"![good, listed flags](real-plots/good.png)",
		"![good, no ROI](real-plots/good-noroi.png)",
		"- good: `--from 1 " + filepath.Join(data, "good.mp4") + "`",
		"- machine: " + machine(),
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Index(md, "cases as expected (listed flags)") > 200 {
		t.Errorf("summary not at the top:\n%s", md[:400])
	}
	if _, err := os.Stat(filepath.Join(plots, "short-noroi.png")); err != nil {
		t.Error(err)
	}
	if t.Failed() {
		t.Log(md)
	}

	// -only runs a subset; an unknown name is an error, not a crash.
	stdout.Reset()
	stderr.Reset()
	if code := run(context.Background(), []string{"-bin", bin, "-dir", data, "-out", out, "-plots", plots, "-only", "good", "-only", "short,good"}, &stdout, &stderr); code != 0 {
		t.Fatalf("-only: exit %d\n%s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "cases as expected (listed flags): 2/2") {
		t.Errorf("-only good,short: %s", stdout.String())
	}
	stderr.Reset()
	if code := run(context.Background(), []string{"-bin", bin, "-dir", data, "-out", out, "-plots", plots, "-only", "nope"}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "no case named nope") {
		t.Errorf("-only nope: exit %d, %s", code, stderr.String())
	}
}

// TestPrecision: the identified runs and the precision condition. A run
// identified but refused for precision (identified=true, certified=false,
// precision.holds=false) counts as identified, not precise, and is listed
// with its σ; wrong, it counts as a false certificate but for the
// precision condition.
func TestPrecision(t *testing.T) {
	dir, bin, data := fakeDevSet(t)
	table := "# name\tfile\tflags\texpect\tgamma0\tgamma0_tol_rel\tgamma1\tgamma1_tol_abs\n" +
		"precise\tprecise.mp4\t--roi 0,0,10,10\tcertified\t10\t0.02\t0.5\t0.1\n" +
		"imprecise\timprecise.mp4\t--roi 0,0,10,10\tcertified\t10\t0.02\t0.5\t0.1\n" +
		"nullsigma\tnullsigma.mp4\t--roi 0,0,10,10\tnot-certified\t0\t0\t0\t0\n" +
		"inconsistent\tinconsistent.mp4\t--roi 0,0,10,10\tany\t10\t0.02\t0\t0\n"
	writeTruth(t, data, table)
	out := filepath.Join(dir, "real-results.md")
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"-bin", bin, "-dir", data, "-out", out, "-plots", filepath.Join(dir, "plots")}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	md := string(b)
	for _, want := range []string{
		"- cases as expected (listed flags): 2/4\n", // precise, nullsigma
		"- certified within tolerance: 1/2 of the cases expected certified (listed flags; no ROI: 0/2)\n",
		// precise and imprecise, at γ0 10 with the ROI and 11 without
		"- the paper's conditions (identified): 2 runs (listed flags) / 2 (no ROI); of them precise: 1 / 1\n",
		"- identified within tolerance (precise or not): 2/2 of the cases expected certified (listed flags; no ROI: 0/2)\n",
		"- false certificates: 0 (listed flags) / 1 (no ROI)\n",
		"- false certificates but for the precision condition (identified but outside tolerance or on a not-certified case): 0 (listed flags) / 2 (no ROI)\n",
		"- identified but refused for precision: imprecise (listed flags): σ(f_n)/f_n 3 % (limit 1 %), σ(ζ) 0.02 (limit 0.0075), a window of about 42 s would reach both; " +
			"imprecise (no ROI): σ(f_n)/f_n 3 % (limit 1 %), σ(ζ) 0.02 (limit 0.0075), a window of about 42 s would reach both\n",
		"| precise | certified | 10 ± 2 % / 0.5 ± 0.1 | 10.0000 ± 0.1000 | 0.5000 ± 0.1000 | +0.00 % | 0.0000 () | certified | σf 0.13 % / 1 %, σζ 0.0012 / 0.026 ✔ | yes |",
		"| imprecise | certified | 10 ± 2 % / 0.5 ± 0.1 | 10.0000 ± 0.3000 | 0.5000 ± 0.1000 | +0.00 % | 0.0000 () | not-certified | σf 3 % / 1 %, σζ 0.02 / 0.0075 ✘ | no |",
		"| nullsigma | not-certified | — / — | 3.0000 ± 1.0000 | 1.0000 ± 1.0000 | — | 0.0000 () | not-certified | σf — / 1 %, σζ — / 0.005 ✘ | yes |",
		"bad JSON on stdout: certified=true, but identified=false and precision holds=true",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if !strings.Contains(stderr.String(), "not-certified (identified, imprecise)") {
		t.Errorf("progress lacks the imprecise run:\n%s", stderr.String())
	}
	if t.Failed() {
		t.Log(md)
	}

	// Without an identified run refused for precision, the list says so.
	if code := run(context.Background(), []string{"-bin", bin, "-dir", data, "-out", out, "-plots", filepath.Join(dir, "plots"), "-only", "precise"}, &stdout, &stderr); code != 0 {
		t.Fatalf("-only precise: exit %d\n%s", code, stderr.String())
	}
	if b, _ := os.ReadFile(out); !strings.Contains(string(b), "- identified but refused for precision: none\n") {
		t.Errorf("-only precise: no \"none\":\n%s", b)
	}
}

func TestShellJoin(t *testing.T) {
	if got, want := shellJoin([]string{"-only", "a,b", "x y", "", "it's"}), `-only a,b 'x y' '' 'it'\''s'`; got != want {
		t.Errorf("shellJoin = %s, want %s", got, want)
	}
}

// fakeDevSet makes a directory with fakePhysd as the binary and an empty
// dev set beside it; it returns the directory, the binary and the set.
func fakeDevSet(t *testing.T) (dir, bin, data string) {
	t.Helper()
	dir = t.TempDir()
	bin = filepath.Join(dir, "physd")
	if err := os.WriteFile(bin, []byte(fakePhysd), 0o755); err != nil {
		t.Fatal(err)
	}
	data = filepath.Join(dir, "realvid")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir, bin, data
}

// writeTruth writes the dev set's truth.tsv.
func writeTruth(t *testing.T, data, table string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(data, "truth.tsv"), []byte(table), 0o644); err != nil {
		t.Fatal(err)
	}
}
