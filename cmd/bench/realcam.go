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
}

// realScenes are the regions of the springWars cart (640×480, 30 fps)
// the daemon is measured on: its track, where windows certify, and a
// strip of wall above it where nothing oscillates (uncertifiable: every
// window is refused, the learner's worst case).
func realScenes() []realScene {
	return []realScene{
		{"certifiable", "certifiable (the cart's track, ROI 0,330,640,60)", "{x: 0, y: 330, w: 640, h: 60}"},
		{"uncertifiable", "uncertifiable (the wall above it, ROI 0,40,640,60)", "{x: 0, y: 40, w: 640, h: 60}"},
	}
}

// realOptions choose what benchRealCameras measures.
type realOptions struct {
	old     string // an older physd to measure before each new run ("": none)
	cams    string // camera counts, comma-separated
	scenes  string // scene names (realScene.key), comma-separated
	profile string // a directory for each run's CPU and heap profiles ("": none)
	// repeat is how many runs each one-camera configuration gets: the
	// per-camera bound is read off them, near this host's run-to-run
	// noise, so their line is a median. More cameras run once.
	repeat int
}

// realBinary is a physd binary the bench measures, with its label.
type realBinary struct{ label, path string }

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
	g1, g0     []float64 // the certified estimates published meanwhile
}

// gammas summarises the certified estimates: their medians and ranges.
func (r *realRun) gammas() string {
	if len(r.g1) == 0 {
		return ""
	}
	return fmt.Sprintf("; certified γ1 median %.4f [%.4f, %.4f], γ0 median %.3f [%.3f, %.3f]",
		median(r.g1), slices.Min(r.g1), slices.Max(r.g1), median(r.g0), slices.Min(r.g0), slices.Max(r.g0))
}

// benchRealCameras measures the daemon on real-camera-sized RTSP streams:
// a dev-set clip (640×480, 30 fps H.264) published in a loop to a
// loopback RTSP server, read by 1, 2 and 4 cameras with 6 s windows and a
// 1 s hop, certifiable and uncertifiable regions.
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
	clip := filepath.Join(realvid, "springWars.mp4")
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
	fmt.Printf("daemon (installed copy) on real-camera streams: %s (H.264 640×480, 30 fps) looped by ffmpeg into a loopback RTSP server (gortsplib) from its start for every run, every camera its own RTSP reader and decoder; 6 s windows, 1 s hop; %v measured after a 20 s warm-up; load average at start %s\n",
		filepath.Base(clip), dur, loadavg())
	for _, sc := range realScenes() {
		if !want[sc.key] {
			continue
		}
		// named labels a line with the scene, and the binary when two are
		// compared.
		named := func(b realBinary) string {
			if len(bins) > 1 {
				return b.label + " physd, " + sc.name
			}
			return sc.name
		}
		// sustain is the new binary's largest run without skips: its CPU
		// per camera says how many cameras the machine's cores carry.
		var sustain *realRun
		for _, n := range counts {
			reps := 1
			if n == 1 {
				reps = max(1, ro.repeat)
			}
			runs := make([][]*realRun, len(bins)) // per binary, in run order
			for rep := range reps {
				for bi, b := range bins {
					prof := ""
					if ro.profile != "" {
						prof = filepath.Join(ro.profile, fmt.Sprintf("%s-%s-%dcam-%d.pprof", b.label, sc.key, n, rep+1))
					}
					// Every run sees the clip from its start: with one
					// publisher looping throughout, each run began at another
					// point of the loop, and on the certifiable region the
					// learner's cold starts (0.20 or 0.33 a window) followed
					// the run's place in the order, not the binary.
					stop, err := rtspserver.StartPublisher(ctx, url, clip, nil)
					if err != nil {
						return err
					}
					load := loadavg()
					r, err := runRealDaemon(ctx, b.path, url, sc.roi, n, dur, prof)
					stop()
					if err != nil {
						return fmt.Errorf("%s daemon with %d RTSP camera(s), %s: %w", b.label, n, sc.name, err)
					}
					label := named(b)
					if reps > 1 {
						label += fmt.Sprintf(" (run %d of %d, load %s)", rep+1, reps, load)
					}
					printRealRun(label, r)
					runs[bi] = append(runs[bi], r)
					if bi == len(bins)-1 && r.skipped == 0 && r.windows > 0 && (sustain == nil || r.cameras > sustain.cameras) {
						sustain = r
					}
				}
			}
			if reps > 1 {
				for bi, b := range bins {
					printRealMedian(named(b), runs[bi])
				}
			}
		}
		if sustain != nil {
			perCam := sustain.cpu.Seconds() / sustain.wall.Seconds() / float64(sustain.cameras)
			fmt.Printf("  %s: this machine's %d cores sustain about %.0f such cameras at a 1 s hop (the cores over the CPU per camera of the largest run without skips, %d cameras: an extrapolation past it, CPU only)\n",
				sc.name, runtime.NumCPU(), float64(runtime.NumCPU())/perCam, sustain.cameras)
		}
	}
	return nil
}

func printRealRun(scene string, r *realRun) {
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
	fmt.Printf("  %s, %d camera(s): %.1f %% of one core per camera (target < 10 %%), %.2f s CPU per estimated window; each camera's learning stage busy %.0f %% of the time; per stage, wall time per camera (%s); %.0f frames/s per camera; %d windows estimated (%d certified), %d skipped; cold starts %.2f per estimated window (%.2f held back); %.2f of the windows estimated without warm training; peak RSS %.1f MiB%s\n",
		scene, r.cameras, 100*perCam, perWindow, 100*busy/wall/n, strings.Join(parts, ", "), r.frames/wall/n, r.windows, r.certified, r.skipped, cold, held, untrained, r.rssMiB, r.gammas())
}

// printRealMedian prints the median over runs of one configuration's CPU
// per camera, beside each run's, and the runs' highest peak RSS and
// skipped windows.
func printRealMedian(scene string, runs []*realRun) {
	pcts := make([]float64, len(runs))
	var each []string
	peak, skipped := 0.0, int64(0)
	for i, r := range runs {
		pcts[i] = 100 * r.cpu.Seconds() / r.wall.Seconds() / float64(r.cameras)
		each = append(each, fmt.Sprintf("%.1f", pcts[i]))
		peak = max(peak, r.rssMiB)
		skipped += r.skipped
	}
	fmt.Printf("  %s, %d camera(s), median of %d runs: %.1f %% of one core per camera (target < 10 %%; runs %s %%), %d skipped, peak RSS at most %.1f MiB\n",
		scene, runs[0].cameras, len(runs), median(pcts), strings.Join(each, " / "), skipped, peak)
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

// runRealDaemon runs physd with n RTSP cameras reading url through roi,
// in real time, for dur after a warm-up.
func runRealDaemon(ctx context.Context, physd, url, roi string, n int, dur time.Duration, profile string) (*realRun, error) {
	dir, err := os.MkdirTemp("", "physd-bench-real")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	httpPort, err := freePort()
	if err != nil {
		return nil, err
	}
	var cams strings.Builder
	for i := range n {
		fmt.Fprintf(&cams, "  - name: cam%d\n    roi: %s\n    source:\n      kind: rtsp\n      url: %q\n", i, roi, url)
	}
	cfg := fmt.Sprintf("log: {level: warn}\nhttp: {listen: \"127.0.0.1:%d\"}\nnats:\n  embedded: {listen: \"127.0.0.1:%d\"}\n  heartbeat: 1s\nwindows: {length: 6s, hop: 1s}\ncameras:\n%s", httpPort, port, cams.String())
	path := filepath.Join(dir, "physd.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		return nil, err
	}
	args := []string{"run", "--quiet", "--config", path, "--state-dir", filepath.Join(dir, "state")}
	if profile != "" {
		args = append(args, "--cpuprofile", profile, "--memprofile", strings.TrimSuffix(profile, ".pprof")+".heap.pprof")
	}
	cmd := exec.CommandContext(ctx, physd, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	nc, err := connectNATS(fmt.Sprintf("nats://127.0.0.1:%d", port), filepath.Join(dir, "state"), &stderr)
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	r := &realRun{daemonRun: daemonRun{cameras: n}}
	var wc windowCounter
	if err := wc.subscribe(nc); err != nil {
		return nil, err
	}
	metrics := fmt.Sprintf("http://127.0.0.1:%d/metrics", httpPort)
	// Warm-up: the RTSP sessions start, the first windows fill and start
	// cold.
	time.Sleep(20 * time.Second)
	m0, err := physdtest.Scrape(ctx, metrics)
	if err != nil {
		return nil, err
	}
	if r.cpu, r.wall, err = wc.measure(cmd.Process.Pid, dur); err != nil {
		return nil, err
	}
	m1, err := physdtest.Scrape(ctx, metrics)
	if err != nil {
		return nil, err
	}
	if r.rssMiB, err = procHWM(cmd.Process.Pid); err != nil {
		return nil, err
	}
	r.windows, r.certified, r.skipped, r.estimates = wc.windows.Load(), wc.certified.Load(), wc.skipped.Load(), wc.estimates.Load()
	r.g1, r.g0 = wc.certifiedGammas()
	r.stage = map[string]float64{}
	for _, s := range realStages {
		l := `stage="` + s + `"`
		r.stage[s] = m1.Sum("physd_stage_seconds_total", l) - m0.Sum("physd_stage_seconds_total", l)
	}
	r.coldStarts = m1.Sum("physd_cold_starts_total") - m0.Sum("physd_cold_starts_total")
	r.coldHeld = m1.Sum("physd_cold_starts_held_total") - m0.Sum("physd_cold_starts_held_total")
	r.untrained = m1.Sum("physd_windows_untrained_total") - m0.Sum("physd_windows_untrained_total")
	r.frames = m1.Sum("physd_frames_received_total") - m0.Sum("physd_frames_received_total")
	_ = cmd.Process.Signal(syscall.SIGTERM)
	if profile != "" {
		// The profile is written on the way out.
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
		}
	}
	return r, nil
}

// connectNATS waits for the daemon's embedded server and connects as its
// subscriber, with the seed physd creates in stateDir.
func connectNATS(url, stateDir string, stderr *bytes.Buffer) (*nats.Conn, error) {
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
