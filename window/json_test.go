package window

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// TestVerdictJSONRoundTrip: MarshalJSON writes non-finite numbers as null
// and UnmarshalJSON reads them back as NaN, while finite numbers, zeros
// included, come back exactly.
func TestVerdictJSONRoundTrip(t *testing.T) {
	v := Verdict{Status: "not-certified", Reasons: []string{"no coverage"}, RelResidual: 0.0125, ResidualLag1: 0,
		TrajectoryResidual: math.Inf(1)}
	v.Coverage.Lo, v.Coverage.Hi = math.NaN(), math.NaN()
	v.Coverage.Width, v.Coverage.SlopeTol = 0, 0.25
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"u_lo":null`) || !strings.Contains(string(b), `"trajectory_residual":null`) {
		t.Fatalf("non-finite numbers not written as null: %s", b)
	}
	var got Verdict
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(got.Coverage.Lo) || !math.IsNaN(got.Coverage.Hi) || !math.IsNaN(got.TrajectoryResidual) {
		t.Errorf("nulls read back as %v, %v, %v; want NaN", got.Coverage.Lo, got.Coverage.Hi, got.TrajectoryResidual)
	}
	if got.RelResidual != 0.0125 || got.ResidualLag1 != 0 || got.Coverage.Width != 0 || got.Coverage.SlopeTol != 0.25 ||
		got.Status != v.Status || len(got.Reasons) != 1 {
		t.Errorf("finite fields changed: %+v", got)
	}
	// A field left out stays at its zero value: only an explicit null is NaN.
	var partial Verdict
	if err := json.Unmarshal([]byte(`{"verdict":"certified","coverage":{"u_lo":null}}`), &partial); err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(partial.Coverage.Lo) || partial.Coverage.Hi != 0 || partial.RelResidual != 0 {
		t.Errorf("partial: u_lo %v u_hi %v rel_residual %v, want NaN 0 0", partial.Coverage.Lo, partial.Coverage.Hi, partial.RelResidual)
	}
	if err := json.Unmarshal([]byte(`{"coverage":{"u_lo":"x"}}`), &partial); err == nil {
		t.Error("a string where a number belongs decoded without error")
	}
}
