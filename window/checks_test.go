package window

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/physd/physd/estimator"
	"github.com/physd/physd/sim"
)

// failedNames are the names of v's failed checks.
func failedNames(v Verdict) []string {
	var n []string
	for _, c := range v.Checks {
		if !c.Passed {
			n = append(n, c.Name)
		}
	}
	return n
}

// Every verdict names its checks: a subscriber reads which failed without
// parsing prose, and the reasons are the failed checks' details in order.
func TestVerdictChecks(t *testing.T) {
	r, v := fitScenes(t, []sim.Scene{pendulum(sim.RegimeUnderdamped, 50, 0, 1.5*math.Pi)})
	if !v.Certified || len(failedNames(v)) != 0 || len(v.Checks) < 10 {
		t.Fatalf("certified window: %s, checks %+v", v.Status, v.Checks)
	}
	for _, c := range v.Checks {
		if c.Detail != "" {
			t.Errorf("passed check %s has a detail %q", c.Name, c.Detail)
		}
	}
	// σ(f_n) 3 % of f_n: only precision fails, and it reads σ.
	rough := Certify(withSigma(r, 1, 3*defaultMaxRelSigmaFn*2*r.Gamma0/r.Sigma0), Thresholds{}, nil)
	if got := failedNames(rough); !slices.Equal(got, []string{CheckPrecision}) || !slices.Equal(rough.Reasons, []string{rough.Checks[len(rough.Checks)-1].Detail}) {
		t.Errorf("imprecise window: failed %v, reasons %q", got, rough.Reasons)
	}
	if !Screen(withSigma(r, 1, 3*defaultMaxRelSigmaFn*2*r.Gamma0/r.Sigma0), Thresholds{}, nil) {
		t.Error("a window refused only for precision does not pass the σ-free screen")
	}
	// A short clip: coverage fails, with no σ read.
	z, dt := swing(0.3, 4, 1)
	short := Certify(resultOf(t, z[:30], dt, tight), Thresholds{}, nil)
	if got := failedNames(short); len(got) == 0 || got[0] != CheckCoverage {
		t.Errorf("short clip: failed %v, reasons %q", got, short.Reasons)
	}
	var want []string
	for _, c := range short.Checks {
		if !c.Passed && !(short.Status == UndampedDiscrete && c.Name == CheckPrecision) {
			want = append(want, c.Detail)
		}
	}
	if !slices.Equal(short.Reasons[:len(want)], want) {
		t.Errorf("reasons %q are not the failed checks' details %q", short.Reasons, want)
	}
	if v := Certify(nil, Thresholds{}, nil); !slices.Equal(failedNames(v), []string{CheckEstimate}) {
		t.Errorf("no estimate: %+v", v.Checks)
	}
	if v := Certify(&estimator.Result{}, Thresholds{}, nil); !slices.Equal(failedNames(v), []string{CheckEstimate}) {
		t.Errorf("empty estimate: %+v", v.Checks)
	}
}

// The estimate schema lists exactly the checks a verdict names.
func TestCheckNamesInSchema(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "docs", "schema", "estimate.v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Defs struct {
			Verdict struct {
				Properties struct {
					Checks struct {
						Items struct {
							Properties struct {
								Name struct {
									Enum []string `json:"enum"`
								} `json:"name"`
							} `json:"properties"`
						} `json:"items"`
					} `json:"checks"`
				} `json:"properties"`
			} `json:"verdict"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	got := s.Defs.Verdict.Properties.Checks.Items.Properties.Name.Enum
	if !slices.Equal(got, CheckNames()) {
		t.Errorf("schema's check names %q, the verdict's %q", got, CheckNames())
	}
}
