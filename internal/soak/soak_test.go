//go:build !nocv

package soak

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/physd/physd/daemon"
	"github.com/physd/physd/internal/physdtest"
	"github.com/physd/physd/wire"
)

var (
	flagDuration = flag.Duration("soak.duration", 0, "how long to run physd (0 skips the soak; make soak runs 30m)")
	flagWarmup   = flag.Duration("soak.warmup", 0, "samples before this are warm-up (0: a third of the duration, at most 1h)")
	flagEvery    = flag.Duration("soak.every", 10*time.Second, "sampling period")
)

// sample is one measurement of the running daemon.
type sample struct {
	at         time.Duration
	rss        float64 // bytes, from /proc
	goroutines float64
	windows    float64 // estimated, all verdicts
	estimates  int64   // received on NATS
	// Where the resident set goes, from the Go runtime's own figures:
	// heap in use, heap held but idle (not yet returned to the kernel),
	// and what the runtime holds from the kernel (sys less what it
	// released). The rest of the resident set, rss − goHeld, is the
	// binary's and its C libraries' (OpenCV, FFmpeg, libc's arenas).
	heapInuse, heapHeld, goHeld float64
}

func config(httpPort, natsPort int) string {
	return fmt.Sprintf(`log: {level: warn, format: json}
http: {listen: "127.0.0.1:%d", pprof: true}
nats: {embedded: {listen: "127.0.0.1:%d"}}
cameras:
  - {name: cam1, source: {kind: synthetic, synthetic: {seed: 1}}}
  - {name: cam2, source: {kind: synthetic, synthetic: {seed: 2, z0: 40}}}
  - {name: cam3, source: {kind: synthetic, synthetic: {seed: 3, z0: 30, event_every: 20s}}}
  - {name: cam4, source: {kind: synthetic, synthetic: {seed: 4, z0: 45, v0: [0, 60]}}}
`, httpPort, natsPort)
}

// TestSoak runs physd with four synthetic cameras for -soak.duration and
// checks that its resident set and goroutine count stay flat after the
// warm-up (median of the last tenth within 5 % of the median of the first
// tenth after warm-up) while windows are processed and estimates arrive
// on NATS throughout.
func TestSoak(t *testing.T) {
	if *flagDuration <= 0 {
		t.Skip("soak: set -soak.duration (make soak)")
	}
	warm := *flagWarmup
	if warm <= 0 {
		warm = min(*flagDuration/3, time.Hour)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *flagDuration+5*time.Minute)
	defer cancel()
	dir := t.TempDir()
	bin := physdtest.Build(t, dir, "github.com/physd/physd/cmd/physd")
	httpPort, natsPort := physdtest.FreePort(t), physdtest.FreePort(t)
	cfg := filepath.Join(dir, "physd.yaml")
	if err := os.WriteFile(cfg, []byte(config(httpPort, natsPort)), 0o600); err != nil {
		t.Fatal(err)
	}
	p := physdtest.Start(t, "physd", bin, []string{"run", "--quiet", "--config", cfg, "--state-dir", filepath.Join(dir, "state")})
	metrics := fmt.Sprintf("http://127.0.0.1:%d/metrics", httpPort)

	var nc *nats.Conn
	var received atomic.Int64
	var bad atomic.Int64
	for start := time.Now(); nc == nil; {
		// As a local subscriber, once physd has created its credentials.
		seed, err := nats.NkeyOptionFromSeed(daemon.SubscriberSeed(filepath.Join(dir, "state")))
		var c *nats.Conn
		if err == nil {
			c, err = nats.Connect(fmt.Sprintf("nats://127.0.0.1:%d", natsPort), seed)
		}
		if err == nil {
			nc = c
			break
		}
		if time.Since(start) > 30*time.Second {
			t.Fatalf("embedded NATS not reachable: %v\n%s", err, p.Log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	defer nc.Close()
	if _, err := nc.Subscribe("physd.*.estimate", func(m *nats.Msg) {
		if _, err := wire.DecodeEstimate(m.Data); err != nil {
			bad.Add(1)
		}
		received.Add(1)
	}); err != nil {
		t.Fatal(err)
	}

	// Heap profiles at the end of the warm-up and at the end: what grew
	// between them, by allocation site (printed by report).
	heapAt := func(name string) string {
		path := filepath.Join(dir, name)
		if err := fetchHeap(ctx, fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/heap", httpPort), path); err != nil {
			t.Errorf("heap profile %s: %v", name, err)
			return ""
		}
		return path
	}
	var warmHeap string
	var samples []sample
	begin := time.Now()
	tick := time.NewTicker(*flagEvery)
	defer tick.Stop()
	for time.Since(begin) < *flagDuration {
		select {
		case <-ctx.Done():
			t.Fatal("soak: out of time")
		case <-tick.C:
		}
		if p.Exited() {
			t.Fatalf("physd exited during the soak:\n%s", p.Log.String())
		}
		m, err := physdtest.Scrape(ctx, metrics)
		if err != nil {
			t.Fatal(err)
		}
		rss, err := p.RSS()
		if err != nil {
			t.Fatal(err)
		}
		s := sample{at: time.Since(begin), rss: float64(rss), goroutines: m.Sum("go_goroutines"),
			windows: m.Sum("physd_windows_total"), estimates: received.Load(),
			heapInuse: m.Sum("go_memstats_heap_inuse_bytes"), heapHeld: m.Sum("go_memstats_heap_idle_bytes") - m.Sum("go_memstats_heap_released_bytes"),
			goHeld: m.Sum("go_memstats_sys_bytes") - m.Sum("go_memstats_heap_released_bytes")}
		samples = append(samples, s)
		if warmHeap == "" && s.at >= warm {
			warmHeap = heapAt("heap-warm.pb.gz")
		}
		if len(samples)%30 == 0 {
			t.Logf("%v: RSS %.1f MiB (Go heap %.1f in use, %.1f idle held; binary and C %.1f), %v goroutines, %v windows, %d estimates", s.at.Round(time.Second), s.rss/(1<<20),
				s.heapInuse/(1<<20), s.heapHeld/(1<<20), (s.rss-s.goHeld)/(1<<20), s.goroutines, s.windows, s.estimates)
		}
	}
	endHeap := heapAt("heap-end.pb.gz")
	if err := p.Stop(30 * time.Second); err != nil {
		t.Error(err)
	}
	report(t, samples, warm, bad.Load())
	if warmHeap != "" && endHeap != "" {
		growth(ctx, t, bin, warmHeap, endHeap)
	}
}

// report prints the figures and checks flatness and progress.
func report(t *testing.T, samples []sample, warm time.Duration, bad int64) {
	i := slices.IndexFunc(samples, func(s sample) bool { return s.at >= warm })
	if i < 0 || len(samples)-i < 20 {
		t.Fatalf("only %d samples after the %v warm-up; run longer or sample more often", len(samples)-max(i, 0), warm)
	}
	after := samples[i:]
	k := max(len(after)/10, 2)
	first, last := after[:k], after[len(after)-k:]
	med := func(ss []sample, f func(sample) float64) float64 {
		v := make([]float64, len(ss))
		for j, s := range ss {
			v[j] = f(s)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	rss := func(s sample) float64 { return s.rss }
	gor := func(s sample) float64 { return s.goroutines }
	rss0, rss1 := med(first, rss), med(last, rss)
	g0, g1 := med(first, gor), med(last, gor)
	end := samples[len(samples)-1]
	span := (end.at - after[0].at).Seconds()
	winRate := (end.windows - after[0].windows) / span
	estRate := float64(end.estimates-after[0].estimates) / span

	fmt.Printf("\n== soak: physd, 4 synthetic cameras, %v (warm-up %v, %d samples) ==\n", end.at.Round(time.Second), warm, len(samples))
	fmt.Printf("RSS          %7.1f MiB → %7.1f MiB  (%+.1f %%; peak %.1f MiB)\n", rss0/(1<<20), rss1/(1<<20), 100*(rss1/rss0-1), slices.MaxFunc(samples, func(a, b sample) int { return int(a.rss - b.rss) }).rss/(1<<20))
	for _, part := range []struct {
		name string
		f    func(sample) float64
	}{
		{"  Go heap in use", func(s sample) float64 { return s.heapInuse }},
		{"  Go heap idle, held", func(s sample) float64 { return s.heapHeld }},
		{"  Go runtime, other", func(s sample) float64 { return s.goHeld - s.heapInuse - s.heapHeld }},
		{"  binary and C", func(s sample) float64 { return s.rss - s.goHeld }},
	} {
		a, b := med(first, part.f), med(last, part.f)
		fmt.Printf("%-21s %7.1f MiB → %7.1f MiB  (%+.1f MiB)\n", part.name, a/(1<<20), b/(1<<20), (b-a)/(1<<20))
	}
	fmt.Printf("goroutines   %7.0f     → %7.0f      (%+.1f %%)\n", g0, g1, 100*(g1/g0-1))
	fmt.Printf("windows      %.0f in all, %.2f/s after warm-up\n", end.windows, winRate)
	fmt.Printf("estimates    %d received on NATS, %.2f/s after warm-up, %d undecodable\n", end.estimates, estRate, bad)

	if rss1 > 1.05*rss0 {
		t.Errorf("RSS grew %.1f %% after warm-up (%.1f → %.1f MiB)", 100*(rss1/rss0-1), rss0/(1<<20), rss1/(1<<20))
	}
	if g1 > 1.05*g0 {
		t.Errorf("goroutines grew from %.0f to %.0f after warm-up", g0, g1)
	}
	if winRate < 3 { // four cameras, one window a second each
		t.Errorf("%.2f windows/s after warm-up, want about 4", winRate)
	}
	if estRate <= 0 || bad > 0 {
		t.Errorf("estimates after warm-up: %.2f/s, %d undecodable", estRate, bad)
	}
}

// fetchHeap saves physd's heap profile (http.pprof) to path.
func fetchHeap(ctx context.Context, url, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o600)
}

// growth prints where the live heap grew between two profiles: the
// allocation sites whose in-use bytes changed most (go tool pprof).
func growth(ctx context.Context, t *testing.T, bin, base, end string) {
	out, err := exec.CommandContext(ctx, "go", "tool", "pprof", "-top", "-nodecount=12", "-sample_index=inuse_space",
		"-diff_base="+base, bin, end).CombinedOutput()
	if err != nil {
		t.Errorf("go tool pprof: %v\n%s", err, out)
		return
	}
	fmt.Printf("\nlive heap, end of the soak against the end of the warm-up (go tool pprof -diff_base):\n%s", out)
}
