package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// zoneLayouts are the two ways of watching the same two regions of the
// clip (the certifiable and the uncertifiable scene's): one camera with a
// zone for each, which decodes the stream once and cuts both regions
// from each whole gray frame, and two cameras with one ROI each, which
// decode it twice.
func zoneLayouts(source string) (zoned, separate []realCamera) {
	var zones []realZone
	for _, sc := range realScenes() {
		zones = append(zones, realZone{name: sc.key, roi: sc.roi})
		separate = append(separate, realCamera{name: sc.key, source: source, roi: sc.roi})
	}
	return []realCamera{{name: "zoned", source: source, zones: zones}}, separate
}

// benchZones measures one camera with two zones against two cameras with
// one ROI each, on the same stream and the same regions, reps times each,
// interleaved (zones first). The must-show is that the zones cost less:
// the stream is decoded once.
func benchZones(ctx context.Context, b realBinary, st *realStream, url, clip string, dur time.Duration, reps int, profileDir string) error {
	zoned, separate := zoneLayouts(st.yaml)
	var regions []string
	for _, sc := range realScenes() {
		regions = append(regions, sc.key+" "+sc.rect)
	}
	layouts := []struct {
		key, name string
		cams      []realCamera
	}{
		{"zones", "one camera with two zones", zoned},
		{"cameras", "two cameras with one ROI each", separate},
	}
	runs := make([][]*realRun, len(layouts))
	for rep := range max(1, reps) {
		for li, l := range layouts {
			prof := ""
			if profileDir != "" {
				prof = filepath.Join(profileDir, fmt.Sprintf("%s-zones-%s-%s-%d.pprof", b.label, st.key, l.key, rep+1))
			}
			load := loadavg()
			r, err := runRealStream(ctx, b, st, url, clip, l.cams, 2, dur, prof, 0)
			if err != nil {
				return fmt.Errorf("%s, %s: %w", st.name, l.name, err)
			}
			runs[li] = append(runs[li], r)
			total := 100 * r.cpu.Seconds() / r.wall.Seconds()
			fmt.Printf("  zones, %s: %s (%s), run %d, load %s: %.1f %% of one core in all, %.1f %% a line%s; %d windows estimated (%d certified), %d skipped; peak RSS %.1f MiB\n",
				st.name, l.name, strings.Join(regions, ", "), rep+1, load, total, total/2, againstDecode(total/2, st.ref),
				r.windows, r.certified, r.skipped, r.rssMiB)
		}
	}
	// medianCPU is per line (cameras is the run's line count); in all,
	// two lines.
	z, c := 2*medianCPU(runs[0]), 2*medianCPU(runs[1])
	fmt.Printf("  zones, %s: two zones of one camera %.1f %% of one core against two cameras %.1f %% (medians of %d): %.0f %% of the cameras' CPU (must be less than 100 %%: %s); decode alone %.1f %% a stream\n",
		st.name, z, c, len(runs[0]), 100*z/c, verdict(z < c), st.ref)
	return nil
}
