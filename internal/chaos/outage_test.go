//go:build !nocv

package chaos

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/physd/physd/internal/physdtest"
)

// TestOutages runs physd with four cameras (three synthetic, one RTSP)
// against a nats-server process, kills nats-server -chaos.outages times
// for -chaos.outage each, then kills the RTSP server for -chaos.rtsp-down.
// Every certified estimate must reach JetStream exactly once, the RTSP
// camera must deliver frames within 5 s of its server's return, and the
// other cameras must keep their pace while it is gone.
func TestOutages(t *testing.T) {
	if testing.Short() {
		t.Skip("chaos: not in -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute+time.Duration(*flagOutages)*(*flagOutage+time.Minute)+*flagRTSPDown)
	defer cancel()
	dir := t.TempDir()
	physd := physdtest.Build(t, dir, "github.com/physd/physd/cmd/physd")
	natsBin := physdtest.Build(t, dir, "github.com/nats-io/nats-server/v2")
	clip := pendulumClip(ctx, t, dir)

	natsPort, httpPort := physdtest.FreePort(t), physdtest.FreePort(t)
	natsURL := "nats://127.0.0.1:" + strconv.Itoa(natsPort)
	store := filepath.Join(dir, "jetstream")
	ns := physdtest.NATS(t, natsBin, natsPort, store)
	rtspAddr := "127.0.0.1:" + strconv.Itoa(physdtest.FreePort(t))
	rs := startRTSP(ctx, t, rtspAddr, clip)

	cfg := filepath.Join(dir, "physd.yaml")
	if err := os.WriteFile(cfg, []byte(streamsConfig(httpPort, natsPort, rtspAddr)), 0o600); err != nil {
		t.Fatal(err)
	}
	p := physdtest.Start(t, "physd", physd, []string{"run", "--quiet", "--config", cfg, "--state-dir", filepath.Join(dir, "state")})
	metricsURL := fmt.Sprintf("http://127.0.0.1:%d/metrics", httpPort)
	scrape := func() physdtest.Metrics {
		t.Helper()
		m, err := physdtest.Scrape(ctx, metricsURL)
		if err != nil {
			t.Fatalf("%v\nphysd log:\n%s", err, tail(p.Log.String()))
		}
		return m
	}
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf(format+"\nphysd log (tail; all of it in %s):\n%s", append(args, keepLog(t, "outages", p.Log), tail(p.Log.String()))...)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("physd log: %s", keepLog(t, "outages", p.Log))
		}
	})

	// Warm up: every camera certifies once.
	for _, cam := range append(synthetic, rtspCam) {
		wctx, wcancel := context.WithTimeout(ctx, 2*time.Minute)
		_, ok := p.Log.Wait(wctx, "certified estimate", func(r physdtest.Record) bool { return r.Str("camera") == cam })
		wcancel()
		if !ok {
			fail("camera %s never certified", cam)
		}
	}

	// nats-server killed and restarted.
	var queuedMax float64
	for i := range *flagOutages {
		reconnects := len(p.Log.Records("nats reconnected"))
		ns.Kill()
		before := len(produced(t, p.Log))
		deadline := time.Now().Add(*flagOutage)
		for time.Now().Before(deadline) {
			queuedMax = max(queuedMax, scrape().Sum("physd_outbox_messages"))
			time.Sleep(250 * time.Millisecond)
		}
		during := len(produced(t, p.Log)) - before
		ns = physdtest.NATS(t, natsBin, natsPort, store)
		wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
		_, ok := p.Log.Wait(wctx, "nats reconnected", func(physdtest.Record) bool { return len(p.Log.Records("nats reconnected")) > reconnects })
		wcancel()
		if !ok {
			fail("physd did not reconnect to nats-server after outage %d", i+1)
		}
		t.Logf("outage %d: %v, %d certified estimates produced while nats-server was dead", i+1, *flagOutage, during)
	}
	// The outbox drains.
	drained := false
	for range 300 {
		if scrape().Sum("physd_outbox_messages") == 0 {
			drained = true
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !drained {
		fail("the outbox did not drain within 30 s of the last reconnection")
	}

	// The RTSP server killed and restarted.
	rtsp := measureRTSPRestart(ctx, t, scrape, func() { rs.kill() }, func() rtspChild {
		rs = startRTSP(ctx, t, rtspAddr, clip)
		return rs
	})

	if err := p.Stop(30 * time.Second); err != nil {
		fail("physd stop: %v", err)
	}
	prod := produced(t, p.Log)
	recv := received(ctx, t, natsURL)
	var lost, dups, extra int
	for k := range prod {
		switch n := recv[k]; {
		case n == 0:
			lost++
			t.Errorf("estimate %s produced, never received", k)
		case n > 1:
			dups += n - 1
			t.Errorf("estimate %s received %d times", k, n)
		}
	}
	for k := range recv {
		if !prod[k] {
			extra++
			t.Errorf("estimate %s received but physd never logged it", k)
		}
	}
	if queuedMax == 0 {
		t.Errorf("the outbox never held a message: the outages tested nothing")
	}

	fmt.Printf("\n== chaos: nats-server killed %d× for %v, RTSP server killed for %v, 4 cameras ==\n", *flagOutages, *flagOutage, *flagRTSPDown)
	fmt.Printf("certified estimates produced   %d\n", len(prod))
	fmt.Printf("received by JetStream          %d (distinct windows)\n", len(recv))
	fmt.Printf("duplicates                     %d\n", dups)
	fmt.Printf("lost                           %d\n", lost)
	fmt.Printf("received, never produced       %d\n", extra)
	fmt.Printf("outbox peak during outages     %.0f messages\n", queuedMax)
	rtsp.print()
}

// keepLog writes a process's log to out/test-artifacts for a failed run
// and returns its path.
func keepLog(t *testing.T, name string, l *physdtest.Log) string {
	dir := filepath.Join("..", "..", "out", "test-artifacts")
	path := filepath.Join(dir, "chaos-"+name+".log")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err.Error()
	}
	if err := os.WriteFile(path, []byte(l.String()), 0o644); err != nil {
		return err.Error()
	}
	abs, _ := filepath.Abs(path)
	return abs
}

// tail returns the last lines of a log.
func tail(s string) string {
	const n = 4000
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
