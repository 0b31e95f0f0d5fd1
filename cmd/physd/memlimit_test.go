package main

import (
	"testing"

	"github.com/physd/physd/config"
)

// The heap limit counts lines: a camera with zones runs one a zone.
func TestLinesCountZones(t *testing.T) {
	cfg := config.Default()
	cfg.Cameras = []config.Camera{{Name: "a"}, {Name: "b", Zones: []config.Zone{{Name: "l"}, {Name: "r"}}}}
	if got := lines(cfg); got != 3 {
		t.Errorf("lines = %d, want 3 (a, b.l, b.r)", got)
	}
}
