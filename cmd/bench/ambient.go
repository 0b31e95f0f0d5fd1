package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/physd/physd/internal/physdtest"
	"github.com/physd/physd/internal/rtspserver"
	"github.com/physd/physd/sim"
)

// The ambient rows (issue 45) measure one camera in mode: ambient on a
// 640×480, 30 fps stream: a simulated structure (one mode at 1 Hz, ζ 2 %,
// 0.5 px rms under white-noise forcing) rendered once, looped by ffmpeg
// into the loopback RTSP server as the real-camera rows' clip is. The
// camera reads the whole frame; its readout is calibrated on the first
// ambientCalibrate of frames, then every frame costs O(pixels + lags),
// and once the record is full every hop runs an identification
// (ambient.Identify). The bounds: CPU at most 3× that of decoding the
// same stream alone, measured in the same call, and peak RSS under
// 160 MB, whatever the record (10 or 30 minutes: the record's memory is
// O(lags × segments) floats).

const (
	// ambientCalibrate and ambientHop are every row's ambient.calibrate
	// and window.hop.
	ambientCalibrate = 20 * time.Second
	ambientHop       = 30 * time.Second
	// ambientClipSeconds is the rendered clip's length: the RTSP
	// publisher loops it.
	ambientClipSeconds = 120
	// ambientFillWait is the longest record a row waits to fill: such a
	// row is measured with its record full, an identification every
	// hop; a longer record's row is measured before it fills (the frame
	// path only, every frame read and summed).
	ambientFillWait = 5 * time.Minute
	// ambientSettle is how long a row that does not wait for its record
	// goes on after the calibration before it is measured: the
	// calibration's frames are read into the record meanwhile.
	ambientSettle = 5 * time.Second
	// ambientRSSBound is the peak resident set bound: 160 MB, in MiB.
	ambientRSSBound = 160e6 / (1 << 20)
	// ambientCPUBound is the bound on a row's CPU over the decode-alone
	// CPU of its stream.
	ambientCPUBound = 3.0
)

// ambientOptions choose what benchAmbient measures.
type ambientOptions struct {
	rows    string // record/max_lag pairs, comma-separated (parseAmbientRows)
	cache   string // the directory the rendered clip is kept in
	profile string // a directory for each run's CPU and heap profiles ("": none)
}

// ambientRow is one ambient camera configuration: its record and its
// longest lag.
type ambientRow struct{ record, maxLag time.Duration }

// full says whether the row is measured with its record full.
func (r ambientRow) full() bool { return r.record <= ambientFillWait }

// String is the row's ambient: section (YAML flow).
func (r ambientRow) String() string {
	return fmt.Sprintf("{record: %s, max_lag: %s, calibrate: %s}", yamlDuration(r.record), yamlDuration(r.maxLag), yamlDuration(ambientCalibrate))
}

// yamlDuration is d as a config file would write it: 10m, 1m, 20s.
func yamlDuration(d time.Duration) string {
	s := d.String()
	for _, zero := range []string{"m0s", "h0m"} {
		if strings.HasSuffix(s, zero) {
			s = s[:len(s)-2]
		}
	}
	return s
}

// parseAmbientRows reads -ambient-rows: record/max_lag pairs,
// comma-separated, such as 10m/60s,30m/60s,2m/20s.
func parseAmbientRows(s string) ([]ambientRow, error) {
	var rows []ambientRow
	for _, f := range strings.Split(s, ",") {
		rec, lag, ok := strings.Cut(strings.TrimSpace(f), "/")
		if !ok {
			return nil, fmt.Errorf("-ambient-rows: %q is not record/max_lag", f)
		}
		var r ambientRow
		var err error
		if r.record, err = time.ParseDuration(rec); err != nil {
			return nil, fmt.Errorf("-ambient-rows: %q: %w", f, err)
		}
		if r.maxLag, err = time.ParseDuration(lag); err != nil {
			return nil, fmt.Errorf("-ambient-rows: %q: %w", f, err)
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// ambientScene is the rendered structure: 640×480 at 30 fps, one mode.
func ambientScene() (sim.Structure, sim.Encoding) {
	return sim.Structure{W: 640, H: 480, FPS: 30, Duration: ambientClipSeconds, Seed: 1, Excitation: sim.ExcitationAmbient,
			Modes: []sim.Mode{{Fn: 1, Zeta: 0.02, AmplitudePx: 0.5}}},
		sim.Encoding{CRF: 23, GOP: 60}
}

// ambientClip renders the ambient scene into dir once and returns its
// path; a clip already there (its name says the scene) is used as it is.
func ambientClip(ctx context.Context, dir string) (string, error) {
	s, enc := ambientScene()
	m := s.Modes[0]
	name := fmt.Sprintf("ambient-%dx%d-%gfps-%gs-seed%d-fn%g-zeta%g-amp%g-crf%d-gop%d.mp4",
		s.W, s.H, s.FPS, s.Duration, s.Seed, m.Fn, m.Zeta, m.AmplitudePx, enc.CRF, enc.GOP)
	path, err := filepath.Abs(filepath.Join(dir, name))
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	partial := strings.TrimSuffix(path, ".mp4") + ".partial.mp4"
	_ = os.Remove(partial)
	t0 := time.Now()
	if _, err := sim.WriteStructureVideo(ctx, partial, s, enc); err != nil {
		return "", fmt.Errorf("ambient clip: %w", err)
	}
	if err := os.Rename(partial, path); err != nil {
		return "", err
	}
	fmt.Printf("  rendered %s in %v\n", path, time.Since(t0).Round(time.Second))
	return path, nil
}

// ambientRun is one 'physd run' of an ambient camera, measured from
// outside.
type ambientRun struct {
	cpu, wall time.Duration
	// calibHWM and calibRSS are VmHWM and VmRSS just before the
	// measurement: the peak through the calibration (and, for a row that
	// waits for its record, the record's filling and first
	// identification), and what is resident after it. The peak is then
	// reset (/proc/PID/clear_refs): hwmMiB and rssMiB are VmHWM and VmRSS
	// at the measurement's end, the peak of the measurement alone
	// (reset false: the reset failed, and hwmMiB is the run's).
	calibHWM, calibRSS float64
	hwmMiB, rssMiB     float64
	reset              bool
	frames             float64
	// records, certified and skipped count the records' diagnostics
	// published during the measurement (an identification each, but the
	// skipped ones); fit is the fit stage's wall time meanwhile
	// (ambient.Identify's).
	records, certified, skipped int64
	fit                         float64
	g1, g0                      []float64 // the certified estimates' (γ1, γ0)
	// calibrated is the calibration's log line (frames, pixels, lags,
	// record and hop in frames); tillFull is how long after it the
	// first record's diagnostic came (full rows).
	calibrated string
	tillFull   time.Duration
	last       string // the last record's verdict and reasons
}

// benchAmbient measures the installed copy of physd with one ambient
// camera per row of ao.rows, on a loopback RTSP stream of the ambient
// clip, beside the CPU of decoding that stream alone; dur 0 skips it.
func benchAmbient(ctx context.Context, physd string, dur time.Duration, ao ambientOptions) error {
	if dur <= 0 {
		return nil
	}
	rows, err := parseAmbientRows(ao.rows)
	if err != nil {
		return err
	}
	installed, remove, err := installCopy(physd)
	if err != nil {
		return err
	}
	defer remove()
	fmt.Printf("daemon (installed copy), one ambient camera (mode: ambient, the whole 640×480 frame, window.hop %s, calibrate %s): a simulated structure (one mode at 1 Hz, ζ 2 %%, 0.5 px rms under white-noise forcing; H.264 CRF 23, GOP 60, 30 fps, %d s) looped by ffmpeg into a loopback RTSP server, started anew for every run; %v measured; load average at start %s\n",
		yamlDuration(ambientHop), yamlDuration(ambientCalibrate), ambientClipSeconds, dur, loadavg())
	clip, err := ambientClip(ctx, ao.cache)
	if err != nil {
		return err
	}
	srv, err := rtspserver.Start(ctx)
	if err != nil {
		return err
	}
	defer srv.Close()
	url := "rtsp://" + srv.Addr() + "/cam"
	load := loadavg()
	dec, err := decodeAlone(ctx, "rtsp", clip, url, dur)
	if err != nil {
		return fmt.Errorf("decode alone, ambient clip: %w", err)
	}
	ref := dec.pct()
	fmt.Printf("  decode alone: %.1f %% of one core (%s; %v measured after a %v warm-up, load %s)\n", ref, dec.command, dur, decodeWarmup, load)
	// peaks are the peak and final RSS per record of the rows measured
	// before their record fills.
	peaks := map[time.Duration][2]float64{}
	for i, row := range rows {
		prof := ""
		if ao.profile != "" {
			prof = filepath.Join(ao.profile, fmt.Sprintf("ambient-%s-%s-%d.pprof", yamlDuration(row.record), yamlDuration(row.maxLag), i+1))
		}
		load := loadavg()
		r, err := runAmbient(ctx, installed, clip, url, row, dur, prof)
		if err != nil {
			return fmt.Errorf("ambient camera, record %s: %w", yamlDuration(row.record), err)
		}
		printAmbientRun(row, r, ref, load)
		if !row.full() && row.maxLag == rows[0].maxLag {
			peaks[row.record] = [2]float64{max(r.calibHWM, r.hwmMiB), r.rssMiB}
		}
	}
	if a, b := peaks[10*time.Minute], peaks[30*time.Minute]; a[0] > 0 && b[0] > 0 {
		fmt.Printf("  ambient, record 30m against 10m (the same lags): peak RSS %.1f against %.1f MiB (%+.1f), resident at the end %.1f against %.1f MiB (%+.1f): the record's memory is its lags × segments, not its length\n",
			b[0], a[0], b[0]-a[0], b[1], a[1], b[1]-a[1])
	}
	return nil
}

// ambientConfig is the configuration of an ambient run: cams, the log at
// info in JSON (the calibration's line is waited for), the embedded NATS
// server on natsPort and /metrics on httpPort, on the loopback.
func ambientConfig(httpPort, natsPort int, cams []realCamera) string {
	return fmt.Sprintf("log: {level: info, format: json}\nhttp: {listen: \"127.0.0.1:%d\"}\nnats:\n  embedded: {listen: \"127.0.0.1:%d\"}\n  heartbeat: 1s\ncameras:\n%s",
		httpPort, natsPort, camerasYAML(cams))
}

// ambientCamera is the camera of an ambient row reading url.
func ambientCamera(url string, row ambientRow) realCamera {
	return realCamera{name: "cam0", source: fmt.Sprintf("{kind: rtsp, url: %q}", url),
		more: fmt.Sprintf("    mode: ambient\n    ambient: %s\n    window: {hop: %s}\n", row, yamlDuration(ambientHop))}
}

// runAmbient runs physd with one ambient camera (row) on url, with a
// publisher of clip started anew, and measures it for dur: after the
// readout's calibration (and ambientSettle), or, for a row that waits for
// its record, from its first record's diagnostic.
func runAmbient(ctx context.Context, physd, clip, url string, row ambientRow, dur time.Duration, profile string) (*ambientRun, error) {
	stop, err := rtspserver.StartPublisher(ctx, url, clip, nil)
	if err != nil {
		return nil, err
	}
	defer stop()
	cams := []realCamera{ambientCamera(url, row)}
	d, err := startRealDaemon(ctx, physd, func(httpPort, natsPort int) string { return ambientConfig(httpPort, natsPort, cams) }, profile)
	if err != nil {
		return nil, err
	}
	defer d.stop()
	// The first record's diagnostic, before the counting starts, and the
	// last one's verdict and reasons.
	first := make(chan struct{})
	var (
		mu   sync.Mutex
		last string
	)
	sub, err := d.nc.Subscribe("physd.*.diag", func(m *nats.Msg) {
		var diag struct {
			Verdict string   `json:"verdict"`
			Reasons []string `json:"reasons"`
		}
		if json.Unmarshal(m.Data, &diag) == nil {
			mu.Lock()
			last = fmt.Sprintf("%s %q", diag.Verdict, diag.Reasons)
			mu.Unlock()
		}
		select {
		case <-first:
		default:
			close(first)
		}
	})
	if err != nil {
		return nil, err
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := firstFrame(ctx, d.metrics, 30*time.Second); err != nil {
		return nil, err
	}
	r := &ambientRun{}
	if r.calibrated, err = waitCalibrated(ctx, d.stderr, ambientCalibrate+60*time.Second); err != nil {
		return nil, err
	}
	calibrated := time.Now()
	if row.full() {
		select {
		case <-first:
			r.tillFull = time.Since(calibrated)
		case <-time.After(row.record + time.Minute):
			return nil, fmt.Errorf("no record's diagnostic %v after the calibration", row.record+time.Minute)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	} else {
		time.Sleep(ambientSettle)
	}
	pid := d.cmd.Process.Pid
	st, err := procStatus(pid)
	if err != nil {
		return nil, err
	}
	r.calibHWM, r.calibRSS = st["VmHWM"], st["VmRSS"]
	// "5" resets the peak resident set to the current one (Linux ≥ 4.0).
	r.reset = os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0) == nil
	m0, err := physdtest.Scrape(ctx, d.metrics)
	if err != nil {
		return nil, err
	}
	if r.cpu, r.wall, err = d.wc.measure(pid, dur); err != nil {
		return nil, err
	}
	m1, err := physdtest.Scrape(ctx, d.metrics)
	if err != nil {
		return nil, err
	}
	if st, err = procStatus(pid); err != nil {
		return nil, err
	}
	r.hwmMiB, r.rssMiB = st["VmHWM"], st["VmRSS"]
	r.records, r.certified, r.skipped = d.wc.windows.Load()+d.wc.skipped.Load(), d.wc.certified.Load(), d.wc.skipped.Load()
	r.g1, r.g0 = d.wc.certifiedGammas()
	mu.Lock()
	r.last = last
	mu.Unlock()
	r.fit = m1.Sum("physd_stage_seconds_total", `stage="fit"`) - m0.Sum("physd_stage_seconds_total", `stage="fit"`)
	r.frames = m1.Sum("physd_frames_received_total") - m0.Sum("physd_frames_received_total")
	return r, nil
}

// waitCalibrated waits, up to timeout, for physd's log (JSON lines on
// stderr) to say the ambient readout is calibrated, and returns that
// line's facts.
func waitCalibrated(ctx context.Context, stderr *lockedBuffer, timeout time.Duration) (string, error) {
	for start := time.Now(); time.Since(start) < timeout; time.Sleep(200 * time.Millisecond) {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		for _, line := range strings.Split(stderr.String(), "\n") {
			var l map[string]any
			if json.Unmarshal([]byte(line), &l) != nil || l["msg"] != "ambient readout calibrated" {
				continue
			}
			var facts []string
			for _, k := range []string{"frames", "pixels", "noise_px", "lags", "record_frames", "hop_frames"} {
				if v, ok := l[k].(float64); ok {
					f := "%s %.3g"
					if v == math.Trunc(v) {
						f = "%s %.0f"
					}
					facts = append(facts, fmt.Sprintf(f, k, v))
				}
			}
			return strings.Join(facts, ", "), nil
		}
	}
	tail := stderr.String()
	if len(tail) > 2000 {
		tail = tail[len(tail)-2000:]
	}
	return "", fmt.Errorf("the ambient readout was not calibrated in %v: %s", timeout, tail)
}

// printAmbientRun prints one ambient row with its checks; ref is the
// stream's decode-alone CPU, % of one core.
func printAmbientRun(row ambientRow, r *ambientRun, ref float64, load string) {
	pct := 100 * r.cpu.Seconds() / r.wall.Seconds()
	wall := r.wall.Seconds()
	what := fmt.Sprintf("record not full (it fills %s after the first frame): the frame path only, no identification", yamlDuration(row.record))
	if row.full() {
		perRecord := 0.0
		if n := r.records - r.skipped; n > 0 {
			perRecord = r.fit / float64(n)
		}
		what = fmt.Sprintf("IDENTIFYING: measured from the first record's diagnostic (%v after the calibration), %d record(s) identified meanwhile (%d certified, %d skipped), ambient.Identify %.2f s wall a record (%.1f %% of the wall); the last record %s%s",
			r.tillFull.Round(time.Second), r.records-r.skipped, r.certified, r.skipped, perRecord, 100*r.fit/wall, r.last, (&realRun{g1: r.g1, g0: r.g0}).gammas())
	}
	ratio := pct / ref
	peak := max(r.calibHWM, r.hwmMiB)
	before := "through the calibration"
	if row.full() {
		before = "through the calibration and the record's filling"
	}
	split := fmt.Sprintf("%s %.1f MiB (resident %.1f MiB after it), the measurement's own peak %.1f MiB (resident %.1f MiB at its end)",
		before, r.calibHWM, r.calibRSS, r.hwmMiB, r.rssMiB)
	if !r.reset {
		split = fmt.Sprintf("the peak could not be reset after the calibration (/proc/PID/clear_refs); resident %.1f MiB at the end", r.rssMiB)
	}
	fmt.Printf("  ambient, record %s, max_lag %s (load %s; calibration: %s): %.1f %% of one core%s (target ≤ %g×: %s); peak RSS (VmHWM) %.1f MiB = %.1f MB (target < 160 MB: %s): %s; %.1f frames/s; %s\n",
		yamlDuration(row.record), yamlDuration(row.maxLag), load, r.calibrated, pct, againstDecode(pct, ref), ambientCPUBound, verdict(ratio <= ambientCPUBound),
		peak, peak*(1<<20)/1e6, verdict(peak < ambientRSSBound), split, r.frames/wall, what)
}
