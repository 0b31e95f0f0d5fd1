package main

import (
	"strings"
	"testing"

	"github.com/physd/physd/wire"
)

// An ambient estimate's row says the record it rests on; a window's does
// not.
func TestEstimateRowAmbientRecord(t *testing.T) {
	e := &wire.Estimate{Camera: "cable", Gamma0: 39.5, Fn: 1, Regime: "underdamped"}
	if row := estimateRow(e); strings.Contains(row, "ambient") {
		t.Errorf("a window's row speaks of a record: %q", row)
	}
	e.Ambient = &wire.Ambient{Record: 600, Frames: 18000}
	if row := estimateRow(e); !strings.HasSuffix(row, ", ambient record 600 s (18000 frames)") {
		t.Errorf("an ambient estimate's row: %q", row)
	}
}
