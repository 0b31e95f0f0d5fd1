package main

import (
	"strings"
	"testing"
)

// TestEvidenceRow: physd watch prints an evidence message as its alert
// and each file with its sha256, and anything else as it came.
func TestEvidenceRow(t *testing.T) {
	got := evidenceRow("physd.cable.evidence", []byte(`{"schema":"physd.evidence/v1","camera":"cable","alert":"b1.cable.alert-raised.1.2","alert_time":"2026-12-03T08:00:00Z","time":"2026-12-03T08:00:31Z",
		"files":[{"kind":"figure","name":"cable/a.png","sha256":"ab12","bytes":10},{"kind":"clip","name":"cable/a.mp4","sha256":"cd34","bytes":99}]}`))
	for _, want := range []string{"alert b1.cable.alert-raised.1.2", "figure cable/a.png (10 B, sha256 ab12)", "clip cable/a.mp4 (99 B, sha256 cd34)"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
	if got := evidenceRow("physd.cable.evidence", []byte("garbage")); got != "EVIDENCE physd.cable.evidence: garbage" {
		t.Errorf("undecodable message printed as %q", got)
	}
}
