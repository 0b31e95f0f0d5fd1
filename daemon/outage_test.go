package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/physd/physd/internal/physdtest"
	"github.com/physd/physd/wire"
)

// natsServer runs a real nats-server with JetStream on a fixed loopback
// port and store, so that it can be stopped and started again as the
// same server.
func natsServer(t *testing.T, port int, store string) *server.Server {
	t.Helper()
	return physdtest.StartNATS(t, &server.Options{Host: "127.0.0.1", Port: port, JetStream: true, StoreDir: store, NoSigs: true, NoLog: true})
}

// TestNATSOutageLosesNoEstimate stops the NATS server physd publishes to
// while the synthetic camera certifies at least four more windows, then
// starts it again on the same port and store. The estimates of the
// outage wait in the outbox on disk and are published in order when NATS
// returns: every certified estimate physd produced is in the JetStream
// stream exactly once (produced = received, duplicates 0, lost 0), in
// window order.
func TestNATSOutageLosesNoEstimate(t *testing.T) {
	port, store := physdtest.FreePort(t), filepath.Join(t.TempDir(), "js")
	ns := natsServer(t, port, store)
	cfg := testConfig()
	cfg.NATS.URLs = []string{fmt.Sprintf("nats://127.0.0.1:%d", port)}
	cfg.NATS.ReconnectWait = 200 * time.Millisecond
	var mu sync.Mutex
	var produced []wire.Estimate
	log := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
	d, err := New(cfg, Options{StateDir: t.TempDir(), Logger: log, ShutdownTimeout: 20 * time.Second,
		OnEstimate: func(e wire.Estimate) { mu.Lock(); produced = append(produced, e); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx, nil) }()
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cancel()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				t.Error("daemon did not stop")
			}
		}
	}
	defer stop()
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(produced) }
	waitFor(t, 60*time.Second, "two certified estimates before the outage", func() bool { return count() >= 2 })

	ns.Shutdown()
	ns.WaitForShutdown()
	before := count()
	waitFor(t, 60*time.Second, "estimates queued in the outbox during the outage", func() bool {
		return count() >= before+4 && d.bus.out.Len() >= 4
	})
	time.Sleep(2 * time.Second)
	queued := d.bus.out.Len()
	m := scrape(t, "http://"+d.HTTPAddr())
	if m["physd_outbox_messages"] < 4 || m["physd_nats_connected"] != 0 || m[`physd_outbox_evicted_total{class="essential"}`] != 0 {
		t.Errorf("during the outage: outbox %v messages, connected %v, essential evicted %v", m["physd_outbox_messages"], m["physd_nats_connected"], m[`physd_outbox_evicted_total{class="essential"}`])
	}
	// The outbox also holds the outage's diagnostics and alerts, so the
	// estimate that proves physd carried on is counted from the restart.
	atReturn := count()
	ns = natsServer(t, port, store)
	waitFor(t, 60*time.Second, "the outbox drained after NATS returned", func() bool { return d.bus.out.Len() == 0 })
	waitFor(t, 30*time.Second, "an estimate after the outage", func() bool { return count() > atReturn })
	stop()

	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	rctx, rcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer rcancel()
	msgs, err := physdtest.StreamMessages(rctx, nc, cfg.NATS.JetStream.Stream, wire.Subject(cfg.NATS.SubjectPrefix, "*", wire.KindEstimate))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range msgs {
		got = append(got, m.Headers().Get(nats.MsgIdHdr))
	}
	mu.Lock()
	defer mu.Unlock()
	seen := map[string]int{}
	for _, id := range got {
		seen[id]++
	}
	dups, lost := 0, 0
	for _, n := range seen {
		dups += n - 1
	}
	for i, e := range produced {
		id := e.ID()
		if seen[id] == 0 {
			lost++
			t.Errorf("estimate %d (%s) never reached JetStream", i, id)
		}
		if i < len(got) && got[i] != id {
			t.Errorf("stream position %d holds %s, want %s: out of order", i, got[i], id)
		}
	}
	t.Logf("produced %d, received %d, duplicates %d, lost %d; %d queued in the outbox during the outage", len(produced), len(got), dups, lost, queued)
	if dups != 0 || len(got) != len(produced) {
		t.Errorf("received %d with %d duplicates, produced %d", len(got), dups, len(produced))
	}
}
