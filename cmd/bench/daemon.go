package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/physd/physd/estimator"
	"github.com/physd/physd/sim"
	"github.com/physd/physd/window"
)

// daemonRun is one `physd run` measured from outside: CPU time, peak RSS
// and the windows it processed, counted on NATS.
type daemonRun struct {
	cameras            int
	cpu                time.Duration
	rssMiB             float64
	windows, certified int64
	skipped, estimates int64
	wall               time.Duration
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// runDaemon runs physd with n synthetic pendulum cameras (20 fps, 4.712 s
// windows, 1 s hop) for dur after a warm-up, in real time.
func runDaemon(ctx context.Context, physd string, n int, dur time.Duration) (*daemonRun, error) {
	dir, err := os.MkdirTemp("", "physd-bench-daemon")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	var cams strings.Builder
	for i := range n {
		fmt.Fprintf(&cams, "  - name: cam%d\n    source:\n      kind: synthetic\n      synthetic: {seed: %d}\n", i, i+1)
	}
	cfg := fmt.Sprintf("log: {level: warn}\nhttp: {listen: \"127.0.0.1:0\"}\nnats:\n  embedded: {listen: \"127.0.0.1:%d\"}\n  heartbeat: 1s\nwindows: {length: 4.712s, hop: 1s}\ncameras:\n%s", port, cams.String())
	path := filepath.Join(dir, "physd.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, physd, "run", "--quiet", "--config", path, "--state-dir", filepath.Join(dir, "state"))
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
	r := &daemonRun{cameras: n}
	var wc windowCounter
	if err := wc.subscribe(nc); err != nil {
		return nil, err
	}
	// Warm-up: the first windows start cold and the first event renders.
	time.Sleep(12 * time.Second)
	if r.cpu, r.wall, err = wc.measure(cmd.Process.Pid, dur); err != nil {
		return nil, err
	}
	// VmHWM, not the child's rusage: Go starts children with vfork, and
	// Linux then charges the parent's resident set to the child's peak.
	r.rssMiB, err = procHWM(cmd.Process.Pid)
	if err != nil {
		return nil, err
	}
	r.windows, r.certified, r.skipped, r.estimates = wc.windows.Load(), wc.certified.Load(), wc.skipped.Load(), wc.estimates.Load()
	_ = cmd.Process.Signal(syscall.SIGTERM)
	return r, nil
}

// windowCounter counts, while counting is set, the windows physd reports
// on NATS: estimated (certified or not) and skipped diagnostics, and
// estimates.
type windowCounter struct {
	counting                               atomic.Bool
	windows, certified, skipped, estimates atomic.Int64
	mu                                     sync.Mutex
	g1, g0                                 []float64 // the estimates' (γ1, γ0)
	// bins counts the estimates by their decimation (wire.Estimate.Bin;
	// 1 for none).
	bins map[int]int
}

// estimateBins are the estimates' decimations and how many had each,
// e.g. "bin 1 ×2, bin 3 ×18" ("" when none were counted).
func (w *windowCounter) estimateBins() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var parts []string
	for _, b := range slices.Sorted(maps.Keys(w.bins)) {
		parts = append(parts, fmt.Sprintf("bin %d ×%d", b, w.bins[b]))
	}
	return strings.Join(parts, ", ")
}

// certifiedGammas are the (γ1, γ0) of the estimates counted.
func (w *windowCounter) certifiedGammas() (g1, g0 []float64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.g1), slices.Clone(w.g0)
}

// measure counts for dur and returns the CPU time process pid spent
// meanwhile (/proc) and the wall time counted.
func (w *windowCounter) measure(pid int, dur time.Duration) (cpu, wall time.Duration, err error) {
	cpu0, err := procCPU(pid)
	if err != nil {
		return 0, 0, err
	}
	w.counting.Store(true)
	t0 := time.Now()
	time.Sleep(dur)
	w.counting.Store(false)
	cpu1, err := procCPU(pid)
	if err != nil {
		return 0, 0, err
	}
	return cpu1 - cpu0, time.Since(t0), nil
}

// subscribe starts counting the diagnostics and estimates on nc: a
// camera's (physd.<camera>.diag, .estimate) and a zone's
// (physd.<camera>.<zone>.diag, .estimate).
func (w *windowCounter) subscribe(nc *nats.Conn) error {
	diag := func(m *nats.Msg) {
		if !w.counting.Load() {
			return
		}
		switch {
		case bytes.Contains(m.Data, []byte(`"verdict":"skipped"`)):
			w.skipped.Add(1)
		default:
			w.windows.Add(1)
			if bytes.Contains(m.Data, []byte(`"verdict":"certified"`)) {
				w.certified.Add(1)
			}
		}
	}
	estimate := func(m *nats.Msg) {
		if !w.counting.Load() {
			return
		}
		w.estimates.Add(1)
		var e struct {
			Gamma0 float64 `json:"gamma0"`
			Gamma1 float64 `json:"gamma1"`
			Bin    int     `json:"bin"`
		}
		if json.Unmarshal(m.Data, &e) == nil {
			w.mu.Lock()
			w.g1, w.g0 = append(w.g1, e.Gamma1), append(w.g0, e.Gamma0)
			if w.bins == nil {
				w.bins = map[int]int{}
			}
			w.bins[max(e.Bin, 1)]++
			w.mu.Unlock()
		}
	}
	for _, s := range []struct {
		subject string
		h       nats.MsgHandler
	}{
		{"physd.*.diag", diag}, {"physd.*.*.diag", diag},
		{"physd.*.estimate", estimate}, {"physd.*.*.estimate", estimate},
	} {
		if _, err := nc.Subscribe(s.subject, s.h); err != nil {
			return err
		}
	}
	return nil
}

// procHWM is a running process's peak resident set in MiB.
func procHWM(pid int) (float64, error) {
	st, err := procStatus(pid)
	if err != nil {
		return 0, err
	}
	v, ok := st["VmHWM"]
	if !ok {
		return 0, fmt.Errorf("no VmHWM in /proc/%d/status", pid)
	}
	return v, nil
}

// procStatus reads the kB fields of /proc/PID/status, in MiB.
func procStatus(pid int) (map[string]float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		v, kB := strings.CutSuffix(strings.TrimSpace(v), " kB")
		if !ok || !kB {
			continue
		}
		var n float64
		if _, err := fmt.Sscan(v, &n); err == nil {
			out[k] = n / 1024
		}
	}
	return out, nil
}

// procCPU is a running process's user+system CPU time from /proc.
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	f := strings.Fields(s[i+2:])
	var ut, st int64
	if _, err := fmt.Sscan(f[11], &ut); err != nil {
		return 0, err
	}
	if _, err := fmt.Sscan(f[12], &st); err != nil {
		return 0, err
	}
	const hz = 100 // USER_HZ on Linux
	return time.Duration(ut+st) * time.Second / hz, nil
}

// benchDaemon prints the steady-state figures with one and four cameras.
func benchDaemon(ctx context.Context, physd string, dur time.Duration) error {
	var runs []*daemonRun
	for _, n := range []int{1, 4} {
		r, err := runDaemon(ctx, physd, n, dur)
		if err != nil {
			return fmt.Errorf("daemon with %d camera(s): %w", n, err)
		}
		runs = append(runs, r)
	}
	fmt.Printf("daemon (installed copy), synthetic pendulum cameras at 20 fps, 4.712 s windows, 1 s hop, %v measured after a 12 s warm-up:\n", dur)
	for _, r := range runs {
		perCam := r.cpu.Seconds() / r.wall.Seconds() / float64(r.cameras)
		perWin := 0.0
		if r.windows > 0 {
			perWin = r.cpu.Seconds() / float64(r.windows) * 1000
		}
		fmt.Printf("  %d camera(s): %.1f %% of one core per camera (target < 10 %%), %.0f ms CPU per processed window, %d windows (%d certified, %d skipped), peak RSS %.1f MiB\n",
			r.cameras, 100*perCam, perWin, r.windows, r.certified, r.skipped, r.rssMiB)
	}
	one := runs[0]
	if one.windows > 0 {
		perWin := one.cpu.Seconds() / float64(one.windows)
		fmt.Printf("  one core sustains about %.0f camera(s) at a 1 s hop (CPU per window incl. decoding-free synthetic rendering)\n", 1/perWin)
	}
	return nil
}

// benchRestart measures training on one window: a cold start versus an
// encoder restored from a checkpoint, medians over runs.
func benchRestart(ctx context.Context, runs int) error {
	g1, g0 := sim.GroundTruth(sim.RegimeUnderdamped)
	frames, _, err := sim.Render(ctx, sim.Scene{System: sim.SystemPendulum, Gamma1: g1, Gamma0: g0, Z0: 50, Duration: 12, FPS: 20, Size: 64, Seed: 1})
	if err != nil {
		return err
	}
	clipAt := func(from int) estimator.Clip {
		c := estimator.Clip{W: 64, H: 64, Dt: 0.05}
		for _, f := range frames[from : from+95] {
			px := make([]float64, len(f.Pix))
			for i, v := range f.Pix {
				px[i] = float64(v) / 255
			}
			c.Frames = append(c.Frames, px)
		}
		return c
	}
	p, err := estimator.LookupPreset(estimator.DefaultPreset)
	if err != nil {
		return err
	}
	opt := estimator.LearnerOptions{Preset: p, Steps: 10, Replay: 1, Seed: 1} // the daemon's defaults
	accept := func(r *estimator.Result) bool { return window.Certify(r, window.Thresholds{}, nil).Certified }
	var cold, warm []float64
	var coldSteps, warmSteps int
	var okCold, okWarm bool
	for range runs {
		l, _ := estimator.NewLearner(opt)
		o, err := l.Window(ctx, []estimator.Clip{clipAt(0)}, accept)
		if err != nil {
			return err
		}
		cold, coldSteps, okCold = append(cold, o.TrainTime.Seconds()), o.TrainSteps, accept(o.Result)
		var buf bytes.Buffer
		if err := l.Save(&buf); err != nil {
			return err
		}
		restored, _ := estimator.NewLearner(opt)
		if err := restored.Load(&buf); err != nil {
			return err
		}
		o, err = restored.Window(ctx, []estimator.Clip{clipAt(100)}, accept)
		if err != nil {
			return err
		}
		warm, warmSteps, okWarm = append(warm, o.TrainTime.Seconds()), o.TrainSteps, accept(o.Result) && !o.Cold
	}
	fmt.Printf("restart: training for the next window, %d runs: cold start %.0f ms (%d steps + closed form, certified %v), restored encoder %.0f ms (%d steps, certified without a cold start %v): %.1f× less\n",
		runs, 1000*median(cold), coldSteps, okCold, 1000*median(warm), warmSteps, okWarm, median(cold)/median(warm))
	return nil
}
