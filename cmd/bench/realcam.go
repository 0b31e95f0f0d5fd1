package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/physd/physd/daemon"
	"github.com/physd/physd/internal/physdtest"
	"github.com/physd/physd/internal/rtspserver"
)

// realScene is a real-camera stream the daemon is measured on: a dev-set
// clip served by a loopback RTSP server, read through a region.
type realScene struct {
	key  string // what -real-scenes calls it
	name string
	roi  string // a camera's roi in the config (YAML), the clip's pixels
	rect string // roi as x,y,w,h
}

// realScenes are the regions of the springWars cart (640×480, 30 fps)
// the daemon is measured on: its track, where windows certify, and a
// strip of wall above it where nothing oscillates (uncertifiable: every
// window is refused, the learner's worst case).
func realScenes() []realScene {
	return []realScene{
		{"certifiable", "certifiable (the cart's track, ROI 0,330,640,60)", "{x: 0, y: 330, w: 640, h: 60}", "0,330,640,60"},
		{"uncertifiable", "uncertifiable (the wall above it, ROI 0,40,640,60)", "{x: 0, y: 40, w: 640, h: 60}", "0,40,640,60"},
	}
}

// realOptions choose what benchRealCameras measures.
type realOptions struct {
	old     string // an older physd to measure before each new run ("": none)
	cams    string // camera counts, comma-separated
	scenes  string // scene names (realScene.key), comma-separated
	sources string // how the cameras read the clip (realSource.key), comma-separated
	zones   int    // runs of one camera with two zones against two cameras (0: none)
	// fromStart has file cameras replay the clip from its start instead
	// of from the key frame RTSP readers start at (rotateClip).
	fromStart bool
	profile   string // a directory for each run's CPU and heap profiles ("": none)
	// repeat is how many runs each one-camera configuration gets: the
	// per-camera bound is read off them, near this host's run-to-run
	// noise, so their line is a median. More cameras run once.
	repeat int
	// bin is windows.bin of the measured binary's runs (realBinary.bin).
	bin int
	// stagger starts run r's daemon r·stagger after its RTSP publisher:
	// each repeat then meets the looped clip at another point. A line's
	// cost depends on where its first windows fall in the clip (its
	// learner's history follows from them), and without it every repeat
	// of one binary meets the clip alike.
	stagger time.Duration
}

// realBinary is a physd binary the bench measures, with its label.
type realBinary struct {
	label, path string
	// bin is windows.bin for its runs (0: the default, left out of the
	// config, which an older binary may not know).
	bin int
}

// realStages are physd_stage_seconds_total's labels, in pipeline order:
// per frame (decode, preprocess) and per window (the learning stage's
// steps, then publishing).
var realStages = []string{"decode", "preprocess", "motion", "train", "fit", "certify", "weigh", "publish"}

// realRun is one `physd run` on RTSP cameras, measured from outside, with
// the learning stage's breakdown from /metrics.
type realRun struct {
	daemonRun
	stage      map[string]float64 // seconds per learning step over the measurement
	coldStarts float64
	coldHeld   float64
	untrained  float64
	frames     float64
	// evidenceMiB is the cameras' buffers of packets for alerts' clips
	// at the end (physd_evidence_buffer_bytes; absent in binaries before
	// issue 47: 0).
	evidenceMiB float64
	g1, g0      []float64 // the certified estimates published meanwhile
	bins        string    // their decimations (windowCounter.estimateBins)
}

// gammas summarises the certified estimates: their medians and ranges.
func (r *realRun) gammas() string {
	if len(r.g1) == 0 {
		return ""
	}
	s := fmt.Sprintf("; certified γ1 median %.4f [%.4f, %.4f], γ0 median %.3f [%.3f, %.3f]",
		median(r.g1), slices.Min(r.g1), slices.Max(r.g1), median(r.g0), slices.Min(r.g0), slices.Max(r.g0))
	if r.bins != "" {
		s += " (" + r.bins + ")"
	}
	return s
}

// realSource is how a real camera reads the clip: from the loopback RTSP
// server, or from the file itself (a file camera replaying it in real
// time, in a loop).
type realSource struct {
	key  string // what -real-sources calls it
	name string
}

// realSources are the ways a camera reads the clip, in the order their
// runs interleave.
var realSources = []realSource{
	{"rtsp", "RTSP"},
	{"file", "file camera (realtime, loop)"},
}

// realStream is the clip as one source kind serves it: the YAML of a
// camera's source, and its decode-alone reference (decodeAlone).
type realStream struct {
	realSource
	yaml string  // a camera's source: section (YAML flow)
	path string  // the clip a file camera replays
	ref  float64 // decode-alone CPU, % of one core
}

// benchRealCameras measures the daemon on real-camera-sized streams: a
// dev-set clip (640×480, 30 fps H.264) published in a loop to a loopback
// RTSP server, or replayed by file cameras, read by 1, 2 and 4 cameras
// with 6 s windows and a 1 s hop, certifiable and uncertifiable regions.
// Every row carries the CPU of decoding the same stream alone (ffmpeg,
// one thread, real time), measured in the same call, and the row's ratio
// to it: absolute figures move with the host, the ratio much less.
func benchRealCameras(ctx context.Context, bins []realBinary, realvid string, dur time.Duration, ro realOptions) error {
	var counts []int
	for _, f := range strings.Split(ro.cams, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return fmt.Errorf("-real-cams: %q is not a camera count", f)
		}
		counts = append(counts, n)
	}
	want := map[string]bool{}
	for _, f := range strings.Split(ro.scenes, ",") {
		want[strings.TrimSpace(f)] = true
	}
	wantSrc := map[string]bool{}
	for _, f := range strings.Split(ro.sources, ",") {
		f = strings.TrimSpace(f)
		if !slices.ContainsFunc(realSources, func(s realSource) bool { return s.key == f }) {
			return fmt.Errorf("-real-sources: %q is not a source (rtsp, file)", f)
		}
		wantSrc[f] = true
	}
	clip, err := filepath.Abs(filepath.Join(realvid, "springWars.mp4"))
	if err != nil {
		return err
	}
	if _, err := os.Stat(clip); err != nil {
		fmt.Printf("real cameras: skipped (%v)\n", err)
		return nil
	}
	srv, err := rtspserver.Start(ctx)
	if err != nil {
		return err
	}
	defer srv.Close()
	url := "rtsp://" + srv.Addr() + "/cam"
	var streams []*realStream
	for _, s := range realSources {
		if !wantSrc[s.key] {
			continue
		}
		st := &realStream{realSource: s}
		switch s.key {
		case "rtsp":
			st.yaml = fmt.Sprintf("{kind: rtsp, url: %q}", url)
		case "file":
			path := clip
			if ro.fromStart {
				st.name = "file camera (realtime, loop, from the clip's start)"
			} else {
				dir, err := os.MkdirTemp("", "physd-bench-clip")
				if err != nil {
					return err
				}
				defer os.RemoveAll(dir)
				var at string
				if path, at, err = rotateClip(ctx, clip, dir); err != nil {
					return err
				}
				st.name = fmt.Sprintf("file camera (realtime, loop, from the key frame at %s s)", at)
			}
			st.path = path
			st.yaml = fmt.Sprintf("{kind: file, path: %q, realtime: true, loop: true}", path)
		}
		streams = append(streams, st)
	}
	fmt.Printf("daemon (installed copy) on real-camera streams: %s (H.264 640×480, 30 fps) looped by ffmpeg into a loopback RTSP server (gortsplib) from its start for every run, every camera its own RTSP reader and decoder; or replayed by file cameras (source kind file, realtime, loop), every camera its own decoder; 6 s windows, 1 s hop; %v measured after a %v warm-up from the first frame decoded; load average at start %s\n",
		filepath.Base(clip), dur, realWarmup, loadavg())
	// The references first, one after the other: each row's ratio is
	// its CPU per camera over its stream's decode-alone CPU.
	for _, st := range streams {
		load := loadavg()
		input := clip
		if st.path != "" {
			input = st.path
		}
		r, err := decodeAlone(ctx, st.key, input, url, dur)
		if err != nil {
			return fmt.Errorf("decode alone, %s: %w", st.name, err)
		}
		st.ref = r.pct()
		fmt.Printf("  decode alone, %s: %.1f %% of one core (%s; %v measured after a %v warm-up, load %s)\n",
			st.name, st.ref, r.command, dur, decodeWarmup, load)
	}
	// medians are the one-camera medians of the new binary, per scene and
	// source, for the file-against-RTSP line.
	medians := map[string]map[string]float64{}
	for _, sc := range realScenes() {
		if !want[sc.key] {
			continue
		}
		medians[sc.key] = map[string]float64{}
		// named labels a line with the scene and source, and the binary
		// when two are compared.
		named := func(b realBinary, st *realStream) string {
			l := sc.name + ", " + st.name
			if len(bins) > 1 {
				l = b.label + " physd, " + l
			}
			return l
		}
		// sustain is the new binary's largest run without skips, per
		// source: its CPU per camera says how many cameras the machine's
		// cores carry.
		sustain := map[string]*realRun{}
		for _, n := range counts {
			reps := 1
			if n == 1 {
				reps = max(1, ro.repeat)
			}
			runs := map[string][][]*realRun{} // per source, per binary, in run order
			for _, st := range streams {
				runs[st.key] = make([][]*realRun, len(bins))
			}
			for rep := range reps {
				for _, st := range streams {
					for bi, b := range bins {
						prof := ""
						if ro.profile != "" {
							prof = filepath.Join(ro.profile, fmt.Sprintf("%s-%s-%s-%dcam-%d.pprof", b.label, sc.key, st.key, n, rep+1))
						}
						cams := make([]realCamera, n)
						for i := range cams {
							cams[i] = realCamera{name: fmt.Sprintf("cam%d", i), source: st.yaml, roi: sc.roi}
						}
						load := loadavg()
						r, err := runRealStream(ctx, b, st, url, clip, cams, n, dur, prof, time.Duration(rep)*ro.stagger)
						if err != nil {
							return fmt.Errorf("%s daemon with %d camera(s), %s, %s: %w", b.label, n, st.name, sc.name, err)
						}
						label := named(b, st)
						if reps > 1 {
							label += fmt.Sprintf(" (run %d of %d, load %s)", rep+1, reps, load)
						}
						printRealRun(label, r, st.ref)
						runs[st.key][bi] = append(runs[st.key][bi], r)
						if bi == len(bins)-1 && r.skipped == 0 && r.windows > 0 && (sustain[st.key] == nil || r.cameras > sustain[st.key].cameras) {
							sustain[st.key] = r
						}
					}
				}
			}
			for _, st := range streams {
				for bi, b := range bins {
					rs := runs[st.key][bi]
					if reps > 1 {
						printRealMedian(named(b, st), rs, st.ref)
					}
					if n == 1 && bi == len(bins)-1 {
						medians[sc.key][st.key] = medianCPU(rs)
					}
					if n == 4 {
						printFourCameras(named(b, st), rs)
					}
				}
			}
		}
		for _, st := range streams {
			if s := sustain[st.key]; s != nil {
				perCam := s.cpu.Seconds() / s.wall.Seconds() / float64(s.cameras)
				fmt.Printf("  %s, %s: this machine's %d cores sustain about %.0f such cameras at a 1 s hop (the cores over the CPU per camera of the largest run without skips, %d cameras: an extrapolation past it, CPU only)\n",
					sc.name, st.name, runtime.NumCPU(), float64(runtime.NumCPU())/perCam, s.cameras)
			}
		}
		m := medians[sc.key]
		if rt, fl := m["rtsp"], m["file"]; rt > 0 && fl > 0 {
			var rtRef, flRef float64
			for _, st := range streams {
				switch st.key {
				case "rtsp":
					rtRef = st.ref
				case "file":
					flRef = st.ref
				}
			}
			fmt.Printf("  %s, one camera: file camera %.1f %% against RTSP %.1f %%: the file path costs %.2f× the RTSP path (target ≤ 1.10×); line/decode %.1f× (file) and %.1f× (RTSP), target ≤ 4×\n",
				sc.name, fl, rt, fl/rt, fl/flRef, rt/rtRef)
		}
	}
	if ro.zones > 0 {
		for _, st := range streams {
			if err := benchZones(ctx, bins[len(bins)-1], st, url, clip, dur, ro.zones, ro.profile); err != nil {
				return err
			}
		}
	}
	return nil
}

// runRealStream runs physd on cams reading st (lines are its lines: one
// a camera, or one a zone) for dur after a warm-up. An RTSP stream's
// publisher starts anew for the run, so that every run sees the clip
// from its start, as a file camera does: with one publisher looping
// throughout, each run began at another point of the loop, and on the
// certifiable region the learner's cold starts (0.20 or 0.33 a window)
// followed the run's place in the order, not the binary.
func runRealStream(ctx context.Context, b realBinary, st *realStream, url, clip string, cams []realCamera, lines int, dur time.Duration, profile string, delay time.Duration) (*realRun, error) {
	if st.key == "rtsp" {
		stop, err := rtspserver.StartPublisher(ctx, url, clip, nil)
		if err != nil {
			return nil, err
		}
		defer stop()
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return runRealDaemon(ctx, b, cams, lines, dur, profile)
}

// medianCPU is the median over runs of the CPU per camera, % of one core.
func medianCPU(runs []*realRun) float64 {
	if len(runs) == 0 {
		return 0
	}
	pcts := make([]float64, len(runs))
	for i, r := range runs {
		pcts[i] = 100 * r.cpu.Seconds() / r.wall.Seconds() / float64(r.cameras)
	}
	return median(pcts)
}

// fourCamerasRSS is the four-camera peak resident set bound: 250 MB.
const fourCamerasRSS = 250e6 / (1 << 20) // MiB

// printFourCameras checks the four-camera runs against their bounds: no
// skipped window, peak RSS under 250 MB.
func printFourCameras(scene string, runs []*realRun) {
	peak, skipped := 0.0, int64(0)
	for _, r := range runs {
		peak = max(peak, r.rssMiB)
		skipped += r.skipped
	}
	fmt.Printf("  %s, 4 cameras: %d skipped window(s) (must be 0: %s), peak RSS %.1f MiB = %.1f MB (must be < 250 MB: %s)\n",
		scene, skipped, verdict(skipped == 0), peak, peak*(1<<20)/1e6, verdict(peak < fourCamerasRSS))
}

// verdict reads a bound's check.
func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}

// printRealRun prints one run's line; ref is its stream's decode-alone
// CPU (% of one core), which the CPU per camera is divided by.
func printRealRun(scene string, r *realRun, ref float64) {
	n := float64(r.cameras)
	wall := r.wall.Seconds()
	perCam := r.cpu.Seconds() / wall / n
	busy := 0.0
	var parts []string
	for _, s := range realStages {
		if s != "decode" && s != "preprocess" && s != "publish" {
			busy += r.stage[s]
		}
		parts = append(parts, fmt.Sprintf("%s %.1f %%", s, 100*r.stage[s]/wall/n))
	}
	cold, held, untrained := 0.0, 0.0, 0.0
	if r.windows > 0 {
		cold, held, untrained = r.coldStarts/float64(r.windows), r.coldHeld/float64(r.windows), r.untrained/float64(r.windows)
	}
	// The learning stage's steps are wall time on its goroutine (its fits
	// spread over the cores), so they say where its time goes, not CPU.
	// While the learner cannot keep up it is busy all the time whatever
	// a window costs: the CPU per estimated window says what a window
	// costs (at a 1 s hop, 0.1 s is the 10 % target).
	perWindow := 0.0
	if r.windows > 0 {
		perWindow = r.cpu.Seconds() / float64(r.windows)
	}
	fmt.Printf("  %s, %d camera(s): %.1f %% of one core per camera (target < 10 %%)%s, %.2f s CPU per estimated window; each camera's learning stage busy %.0f %% of the time; per stage, wall time per camera (%s); %.0f frames/s per camera; %d windows estimated (%d certified), %d skipped; cold starts %.2f per estimated window (%.2f held back); %.2f of the windows estimated without warm training; peak RSS %.1f MiB (evidence buffers %.1f MiB)%s\n",
		scene, r.cameras, 100*perCam, againstDecode(100*perCam, ref), perWindow, 100*busy/wall/n, strings.Join(parts, ", "), r.frames/wall/n, r.windows, r.certified, r.skipped, cold, held, untrained, r.rssMiB, r.evidenceMiB, r.gammas())
}

// printRealMedian prints the median over runs of one configuration's CPU
// per camera, beside each run's, with its ratio to ref (the stream's
// decode-alone CPU, % of one core), and the runs' highest peak RSS and
// skipped windows.
func printRealMedian(scene string, runs []*realRun, ref float64) {
	pcts := make([]float64, len(runs))
	var each []string
	peak, skipped := 0.0, int64(0)
	for i, r := range runs {
		pcts[i] = 100 * r.cpu.Seconds() / r.wall.Seconds() / float64(r.cameras)
		each = append(each, fmt.Sprintf("%.1f", pcts[i]))
		peak = max(peak, r.rssMiB)
		skipped += r.skipped
	}
	fmt.Printf("  %s, %d camera(s), median of %d runs: %.1f %% of one core per camera (target < 10 %%; runs %s %%)%s, %d skipped, peak RSS at most %.1f MiB\n",
		scene, runs[0].cameras, len(runs), median(pcts), strings.Join(each, " / "), againstDecode(median(pcts), ref), skipped, peak)
}

// againstDecode is a row's CPU beside its stream's decode-alone CPU ref
// (both % of one core) and their ratio; "" without a reference.
func againstDecode(pct, ref float64) string {
	if ref <= 0 {
		return ""
	}
	return fmt.Sprintf("; decode alone %.1f %%, line/decode %.1f×", ref, pct/ref)
}

// loadavg is /proc/loadavg's first three fields.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// realCamera is one camera of a real-stream run: its source (YAML flow),
// and either a region or zones.
type realCamera struct {
	name, source string
	roi          string     // YAML flow; "" with zones
	zones        []realZone // none: one line, the camera's
	// more are more of the camera's keys, YAML lines indented as its own
	// (mode, ambient, window; "": none).
	more string
}

// realZone is one zone of a realCamera.
type realZone struct{ name, roi string }

// camerasYAML is the cameras: section for cams.
func camerasYAML(cams []realCamera) string {
	var b strings.Builder
	for _, c := range cams {
		fmt.Fprintf(&b, "  - name: %s\n    source: %s\n", c.name, c.source)
		if c.roi != "" {
			fmt.Fprintf(&b, "    roi: %s\n", c.roi)
		}
		if len(c.zones) > 0 {
			b.WriteString("    zones:\n")
			for _, z := range c.zones {
				fmt.Fprintf(&b, "      - {name: %s, roi: %s}\n", z.name, z.roi)
			}
		}
		b.WriteString(c.more)
	}
	return b.String()
}

// realConfig is the configuration of a real-stream run: cams, 6 s
// windows with a 1 s hop (frames binned by bin when it is above 1), the
// embedded NATS server on natsPort and the HTTP endpoint (/metrics) on
// httpPort, both on the loopback.
func realConfig(httpPort, natsPort int, cams []realCamera, bin int) string {
	binned := ""
	if bin > 1 {
		binned = fmt.Sprintf(", bin: %d", bin)
	}
	return fmt.Sprintf("log: {level: warn}\nhttp: {listen: \"127.0.0.1:%d\"}\nnats:\n  embedded: {listen: \"127.0.0.1:%d\"}\n  heartbeat: 1s\nwindows: {length: 6s, hop: 1s%s}\ncameras:\n%s",
		httpPort, natsPort, binned, camerasYAML(cams))
}

// runRealDaemon runs physd with cams (lines lines: a camera without zones
// is one, a camera with zones one a zone), in real time, for dur after a
// warm-up.
func runRealDaemon(ctx context.Context, b realBinary, cams []realCamera, lines int, dur time.Duration, profile string) (*realRun, error) {
	d, err := startRealDaemon(ctx, b.path, func(httpPort, natsPort int) string { return realConfig(httpPort, natsPort, cams, b.bin) }, profile)
	if err != nil {
		return nil, err
	}
	defer d.stop()
	r := &realRun{daemonRun: daemonRun{cameras: lines}}
	// Warm-up: the streams start, the first windows fill and start
	// cold. It counts from the first frame: an RTSP camera's comes at
	// the clip's second key frame, 8 s after a file camera's.
	if err := firstFrame(ctx, d.metrics, 30*time.Second); err != nil {
		return nil, err
	}
	time.Sleep(realWarmup)
	m0, err := physdtest.Scrape(ctx, d.metrics)
	if err != nil {
		return nil, err
	}
	pid := d.cmd.Process.Pid
	if r.cpu, r.wall, err = d.wc.measure(pid, dur); err != nil {
		return nil, err
	}
	m1, err := physdtest.Scrape(ctx, d.metrics)
	if err != nil {
		return nil, err
	}
	if r.rssMiB, err = procHWM(pid); err != nil {
		return nil, err
	}
	wc := d.wc
	r.windows, r.certified, r.skipped, r.estimates = wc.windows.Load(), wc.certified.Load(), wc.skipped.Load(), wc.estimates.Load()
	r.g1, r.g0 = wc.certifiedGammas()
	r.bins = wc.estimateBins()
	r.stage = map[string]float64{}
	for _, s := range realStages {
		l := `stage="` + s + `"`
		r.stage[s] = m1.Sum("physd_stage_seconds_total", l) - m0.Sum("physd_stage_seconds_total", l)
	}
	r.coldStarts = m1.Sum("physd_cold_starts_total") - m0.Sum("physd_cold_starts_total")
	r.coldHeld = m1.Sum("physd_cold_starts_held_total") - m0.Sum("physd_cold_starts_held_total")
	r.untrained = m1.Sum("physd_windows_untrained_total") - m0.Sum("physd_windows_untrained_total")
	r.frames = m1.Sum("physd_frames_received_total") - m0.Sum("physd_frames_received_total")
	r.evidenceMiB = m1.Sum("physd_evidence_buffer_bytes") / (1 << 20)
	return r, nil
}

// realDaemon is a running 'physd run' of a real-stream run: the process,
// its NATS subscriber counting the windows, and its /metrics.
type realDaemon struct {
	cmd     *exec.Cmd
	stderr  *lockedBuffer // the process's stderr (its log)
	nc      *nats.Conn
	wc      *windowCounter
	metrics string // the /metrics URL
	dir     string // the configuration and the state directory
	profile string // the CPU profile's file ("": none)
}

// startRealDaemon starts physd on the configuration config writes for
// its HTTP and embedded NATS ports (on the loopback), in a temporary
// directory, with CPU and heap profiles when profile is set, and
// subscribes to its diagnostics and estimates (not yet counting).
func startRealDaemon(ctx context.Context, physd string, config func(httpPort, natsPort int) string, profile string) (*realDaemon, error) {
	dir, err := os.MkdirTemp("", "physd-bench-real")
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	httpPort, err := freePort()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	path := filepath.Join(dir, "physd.yaml")
	if err := os.WriteFile(path, []byte(config(httpPort, port)), 0o644); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	args := []string{"run", "--quiet", "--config", path, "--state-dir", filepath.Join(dir, "state")}
	if profile != "" {
		args = append(args, "--cpuprofile", profile, "--memprofile", strings.TrimSuffix(profile, ".pprof")+".heap.pprof")
	}
	d := &realDaemon{cmd: exec.CommandContext(ctx, physd, args...), stderr: &lockedBuffer{}, wc: &windowCounter{},
		metrics: fmt.Sprintf("http://127.0.0.1:%d/metrics", httpPort), dir: dir, profile: profile}
	d.cmd.Stderr = d.stderr
	if err := d.cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if d.nc, err = connectNATS(fmt.Sprintf("nats://127.0.0.1:%d", port), filepath.Join(dir, "state"), d.stderr); err == nil {
		err = d.wc.subscribe(d.nc)
	}
	if err != nil {
		d.stop()
		return nil, err
	}
	return d, nil
}

// stop asks physd to stop (SIGTERM) and, with a profile, waits up to 15 s
// for it to be written on the way out; then kills it, waits for it and
// removes its directory.
func (d *realDaemon) stop() {
	done := make(chan struct{})
	go func() { _ = d.cmd.Wait(); close(done) }()
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	if d.profile != "" {
		select {
		case <-done:
		case <-time.After(15 * time.Second):
		}
	}
	if d.nc != nil {
		d.nc.Close()
	}
	_ = d.cmd.Process.Kill()
	<-done
	os.RemoveAll(d.dir)
}

// lockedBuffer is a process's output, safe to read while it is written.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// realWarmup is how long a real-stream run goes from its first frame to
// its measurement.
const realWarmup = 20 * time.Second

// firstFrame waits, up to timeout, until physd has decoded a frame.
func firstFrame(ctx context.Context, metrics string, timeout time.Duration) error {
	for start := time.Now(); time.Since(start) < timeout; time.Sleep(100 * time.Millisecond) {
		sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		m, err := physdtest.Scrape(sctx, metrics)
		cancel()
		if err == nil && m.Sum("physd_frames_received_total") > 0 {
			return nil
		}
	}
	return fmt.Errorf("no frame decoded in %v", timeout)
}

// connectNATS waits for the daemon's embedded server and connects as its
// subscriber, with the seed physd creates in stateDir.
func connectNATS(url, stateDir string, stderr fmt.Stringer) (*nats.Conn, error) {
	for start := time.Now(); ; time.Sleep(100 * time.Millisecond) {
		seed, err := nats.NkeyOptionFromSeed(daemon.SubscriberSeed(stateDir))
		if err == nil {
			var nc *nats.Conn
			if nc, err = nats.Connect(url, seed); err == nil {
				return nc, nil
			}
		}
		if time.Since(start) > 20*time.Second {
			return nil, fmt.Errorf("physd did not start: %s", stderr.String())
		}
	}
}
