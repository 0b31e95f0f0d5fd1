package alertsub

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/physd/physd/config"
	"github.com/physd/physd/daemon"
	"github.com/physd/physd/internal/physdtest"
	"github.com/physd/physd/wire"
)

// natsServer runs a real nats-server with JetStream on a free loopback
// port; the test's cleanup stops it.
func natsServer(t *testing.T) *server.Server {
	t.Helper()
	ns := physdtest.StartNATS(t, &server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT, JetStream: true,
		StoreDir: filepath.Join(t.TempDir(), "js"), NoSigs: true, NoLog: true})
	return ns
}

func connect(t *testing.T, ns *server.Server) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// testLog logs to the test at Info.
func testLog(t *testing.T, name string) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo})).With("sub", name)
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// script writes a command line that appends each alert's id to
// dir/attempts, fails the first attempt of every id (a marker file per
// id), checks that stdin is the alert the environment names, and appends
// the id to dir/received on success.
func script(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "page.sh")
	s := `#!/bin/sh
id="$PHYSD_ALERT_ID"
echo "$id" >> "` + dir + `/attempts"
grep -q "\"state\":\"$PHYSD_ALERT_STATE\"" || { echo "stdin is not the $PHYSD_ALERT_STATE alert" >&2; exit 2; }
if [ ! -e "` + dir + `/failed.$id" ]; then : > "` + dir + `/failed.$id"; echo "first attempt fails" >&2; exit 1; fi
echo "$id" >> "` + dir + `/received"
`
	if err := os.WriteFile(path, []byte(s), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func lines(path string) []string {
	b, _ := os.ReadFile(path)
	return strings.Fields(string(b))
}

// sub is a subscriber running in the test.
type sub struct {
	s      *Subscriber
	nc     *nats.Conn
	cancel context.CancelFunc
	done   chan error
}

func startSub(t *testing.T, ns *server.Server, cfg Config, crash func(string) bool) *sub {
	t.Helper()
	nc := connect(t, ns)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	s, err := New(ctx, nc, cfg)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	s.crashBeforeAck = crash
	ctx, cancel = context.WithCancel(context.Background())
	r := &sub{s: s, nc: nc, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- s.Run(ctx) }()
	t.Cleanup(func() { r.stop(t) })
	return r
}

// stop cancels Run, waits for it and closes the connection.
func (r *sub) stop(t *testing.T) error {
	r.cancel()
	defer r.nc.Close()
	select {
	case err := <-r.done:
		r.done <- err
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("the subscriber did not stop within 30 s")
		return nil
	}
}

func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(timeout); !cond(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("no %s within %v", what, timeout)
		}
	}
}

// settled reports whether the durable consumer has nothing pending nor
// waiting for an acknowledgement.
func settled(t *testing.T, nc *nats.Conn, durable string) bool {
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := js.Consumer(ctx, DefaultStream, durable)
	if err != nil {
		return false
	}
	info, err := c.Info(ctx)
	return err == nil && info.NumPending == 0 && info.NumAckPending == 0
}

// alertIDs are the ids of every alert in the stream.
func alertIDs(t *testing.T, nc *nats.Conn) (ids []string, states map[string]int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	states = map[string]int{}
	for _, f := range DefaultFilters("physd") {
		msgs, err := physdtest.StreamMessages(ctx, nc, DefaultStream, f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			ids = append(ids, m.Headers().Get(nats.MsgIdHdr))
			var a wire.Alert
			if err := json.Unmarshal(m.Data(), &a); err != nil {
				t.Fatal(err)
			}
			states[string(a.State)]++
		}
	}
	return ids, states
}

// TestDriftingCamerasAlertsReachCommandOnce runs a real physd daemon with
// two synthetic cameras whose alert limits are tighter than their
// estimates' scatter, so that f_n and ζ drift across the limits and
// alerts are raised and cleared every few seconds. The subscriber runs a
// command that fails the first attempt of every alert; it is stopped
// mid-stream and started again, and once killed (as a process would be)
// after an action succeeded and before its acknowledgement. Every alert
// in the stream reaches the command's success exactly once, after exactly
// one failed attempt.
func TestDriftingCamerasAlertsReachCommandOnce(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("runs the daemon, which cannot keep up with its cameras under the race detector")
	}
	start := time.Now()
	ns := natsServer(t)
	dir := t.TempDir()
	cfg := config.Default()
	cfg.HTTP.Listen = "127.0.0.1:0"
	cfg.NATS.URLs = []string{ns.ClientURL()}
	cfg.NATS.Heartbeat = time.Second
	cfg.Alerts = config.Alerts{BaselineWindows: 1, FnDrift: 5e-5, ZetaDrift: 0.002, Consecutive: 1}
	a, b := config.DefaultCamera(), config.DefaultCamera()
	a.Name, b.Name = "a", "b"
	b.Source.Synthetic.Seed = 2
	cfg.Cameras = []config.Camera{a, b}
	d, err := daemon.New(cfg, daemon.Options{StateDir: filepath.Join(dir, "state"), Logger: slog.New(slog.DiscardHandler), ShutdownTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	dctx, dcancel := context.WithCancel(context.Background())
	ddone := make(chan error, 1)
	ready := make(chan struct{})
	go func() { ddone <- d.Run(dctx, func() { close(ready) }) }()
	stopDaemon := sync.OnceFunc(func() {
		dcancel()
		select {
		case <-ddone:
		case <-time.After(30 * time.Second):
			t.Error("the daemon did not stop within 30 s")
		}
	})
	defer stopDaemon()
	select {
	case <-ready:
	case err := <-ddone:
		t.Fatalf("daemon: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the daemon was not ready within 30 s")
	}

	out := filepath.Join(dir, "out")
	os.MkdirAll(out, 0o755)
	scfg := Config{Action: Command{Line: script(t, out), Timeout: 10 * time.Second}, MaxDeliver: 3,
		Backoff: []time.Duration{200 * time.Millisecond}, AckWait: 2 * time.Second}
	received := func() int { return len(lines(filepath.Join(out, "received"))) }

	// 1. The first subscriber, until it handed two alerts over.
	scfg.Logger = testLog(t, "first")
	s1 := startSub(t, ns, scfg, nil)
	waitFor(t, 90*time.Second, "two alerts handled by the first subscriber", func() bool { return received() >= 2 })
	if err := s1.stop(t); err != nil {
		t.Fatal(err)
	}
	st1 := s1.s.Stats()
	// 2. Stopped while the cameras carry on raising and clearing.
	time.Sleep(3 * time.Second)
	// 3. The second is killed after its first action succeeded and the id
	// was recorded, before the acknowledgement.
	var crashed string
	scfg.Logger = testLog(t, "second")
	s2 := startSub(t, ns, scfg, func(id string) bool { crashed = id; return true })
	select {
	case err := <-s2.done:
		s2.done <- err
		if err != errCrashed {
			t.Fatalf("second subscriber: %v, want the simulated crash", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the second subscriber handled no alert within 30 s")
	}
	s2.nc.Close()
	// 4. The third finds the crashed one's alert recorded and carries on.
	scfg.Logger = testLog(t, "third")
	s3 := startSub(t, ns, scfg, nil)
	waitFor(t, 60*time.Second, "an alert handled after the crash", func() bool { return s3.s.Stats().Handled >= 2 })
	stopDaemon()
	check := connect(t, ns)
	waitFor(t, 60*time.Second, "every alert acknowledged", func() bool { return settled(t, check, DefaultDurable) })
	if err := s3.stop(t); err != nil {
		t.Fatal(err)
	}
	st3 := s3.s.Stats()

	produced, states := alertIDs(t, check)
	got := lines(filepath.Join(out, "received"))
	count := map[string]int{}
	for _, id := range got {
		count[id]++
	}
	attempts := map[string]int{}
	for _, id := range lines(filepath.Join(out, "attempts")) {
		attempts[id]++
	}
	dups, lost, badAttempts := 0, 0, 0
	for _, id := range produced {
		switch n := count[id]; {
		case n == 0:
			lost++
			t.Errorf("alert %s never reached the command", id)
		case n > 1:
			dups += n - 1
			t.Errorf("alert %s reached the command %d times", id, n)
		}
		if attempts[id] != 2 {
			badAttempts++
			t.Errorf("alert %s: %d attempts, want 2 (one failure, one success)", id, attempts[id])
		}
	}
	for id := range count {
		if !slices.Contains(produced, id) {
			t.Errorf("the command received %s, which is not in the stream", id)
		}
	}
	t.Logf("produced %d alerts (%d raised, %d cleared), received %d, duplicates %d, lost %d; crash before the ack after %s; "+
		"first subscriber %+v, third %+v; %v", len(produced), states["raised"], states["cleared"], len(got), dups, lost, crashed, st1, st3,
		time.Since(start).Round(100*time.Millisecond))
	if states["raised"] == 0 || states["cleared"] == 0 {
		t.Errorf("want raised and cleared alerts, got %v", states)
	}
	if st3.Duplicates < 1 {
		t.Errorf("the third subscriber saw %d duplicates, want the crashed one's alert", st3.Duplicates)
	}
	if crashed == "" || count[crashed] != 1 {
		t.Errorf("the alert of the crash (%q) reached the command %d times, want 1", crashed, count[crashed])
	}
}

// publishAlert publishes one alert as the daemon does: JSON on
// physd.<camera>.alert with a Nats-Msg-Id.
func publishAlert(t *testing.T, js jetstream.JetStream, camera, state string, n int) string {
	t.Helper()
	end := time.Date(2026, 1, 1, 0, 0, n, 0, time.UTC)
	a := &wire.Alert{Schema: wire.SchemaAlert, Camera: camera, Time: end, State: wire.AlertState(state), Reasons: []string{"test"},
		WindowStart: end.Add(-5 * time.Second), WindowEnd: end}
	id := a.ID()
	data, _ := json.Marshal(a)
	msg := nats.NewMsg(wire.Subject("physd", a.Key(), a.Kind()))
	msg.Data = data
	msg.Header.Set(nats.MsgIdHdr, id)
	if _, err := js.PublishMsg(context.Background(), msg); err != nil {
		t.Fatal(err)
	}
	return id
}

// alertStream creates the stream as physd does.
func alertStream(t *testing.T, nc *nats.Conn) jetstream.JetStream {
	t.Helper()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	_, err = js.CreateStream(context.Background(), jetstream.StreamConfig{Name: DefaultStream,
		Subjects: wire.StreamSubjects("physd"), Duplicates: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// TestFailingActionDeadLetters gives two alerts to an action that always
// fails and one message that is not an alert: the alerts go to the
// dead-letter subject after MaxDeliver attempts each, the bad message at
// once, with headers naming the original subject, sequence and error; the
// consumer is left with nothing pending, and a later alert still reaches
// the action.
func TestFailingActionDeadLetters(t *testing.T) {
	ns := natsServer(t)
	nc := connect(t, ns)
	js := alertStream(t, nc)
	dead := make(chan *nats.Msg, 10)
	if _, err := nc.ChanSubscribe(DefaultDeadLetter, dead); err != nil {
		t.Fatal(err)
	}
	nc.Flush()
	dir := t.TempDir()
	attempts := filepath.Join(dir, "attempts")
	line := `echo "$PHYSD_ALERT_ID" >> ` + attempts + `; case "$PHYSD_ALERT_ID" in *ok*) exit 0;; esac; echo "pager unreachable" >&2; exit 1`
	ids := []string{publishAlert(t, js, "a", "raised", 1), publishAlert(t, js, "b", "raised", 2)}
	bad := nats.NewMsg("physd.c.alert")
	bad.Data = []byte(`{"schema":"physd.alert/v1","camera":"c","state":"lukewarm"}`)
	bad.Header.Set(nats.MsgIdHdr, "c.bad")
	if _, err := js.PublishMsg(context.Background(), bad); err != nil {
		t.Fatal(err)
	}
	s := startSub(t, ns, Config{Action: Command{Line: line, Timeout: 5 * time.Second}, MaxDeliver: 3,
		Backoff: []time.Duration{100 * time.Millisecond, 200 * time.Millisecond}, AckWait: 2 * time.Second, Logger: testLog(t, "failing")}, nil)
	var letters []*nats.Msg
	for len(letters) < 3 {
		select {
		case m := <-dead:
			letters = append(letters, m)
		case <-time.After(20 * time.Second):
			t.Fatalf("%d dead letters within 20 s, want 3", len(letters))
		}
	}
	for i, m := range letters {
		h := m.Header
		switch i {
		case 0, 1:
			if h.Get(HeaderAlertID) != ids[i] || h.Get(HeaderDeliveries) != "3" || !strings.Contains(h.Get(HeaderError), "pager unreachable") ||
				h.Get(HeaderSubject) != fmt.Sprintf("physd.%s.alert", []string{"a", "b"}[i]) || h.Get(HeaderStreamSeq) != fmt.Sprint(i+1) {
				t.Errorf("dead letter %d: headers %v", i, h)
			}
		case 2:
			if h.Get(HeaderSubject) != "physd.c.alert" || !strings.Contains(h.Get(HeaderError), "field state") || h.Get(HeaderDeliveries) != "1" {
				t.Errorf("dead letter of the bad message: headers %v", h)
			}
		}
	}
	ok := publishAlert(t, js, "ok", "raised", 3)
	waitFor(t, 20*time.Second, "the alert after the dead letters handled", func() bool { return s.s.Stats().Handled == 1 })
	waitFor(t, 10*time.Second, "nothing pending", func() bool { return settled(t, nc, DefaultDurable) })
	got := lines(attempts)
	t.Logf("attempts %d, stats %+v", len(got), s.s.Stats())
	if want := []string{ids[0], ids[0], ids[0], ids[1], ids[1], ids[1], ok}; !slices.Equal(got, want) {
		t.Errorf("attempts %v, want %v", got, want)
	}
	if st := s.s.Stats(); st.DeadLettered != 3 || st.Failures != 6 {
		t.Errorf("stats %+v, want 3 dead-lettered, 6 failures", st)
	}
}

// TestDeadLetterStream: when a stream keeps the dead-letter subject, a
// message that is not an alert is stored there through JetStream, with
// the original subject and sequence, and the consumer moves on.
func TestDeadLetterStream(t *testing.T) {
	ns := natsServer(t)
	nc := connect(t, ns)
	js := alertStream(t, nc)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "PHYSD_ALERTS_DEAD", Subjects: []string{DefaultDeadLetter}}); err != nil {
		t.Fatal(err)
	}
	bad := nats.NewMsg("physd.a.alert")
	bad.Data = []byte(`{"schema":"physd.alert/v1",`)
	bad.Header.Set(nats.MsgIdHdr, "a.truncated")
	if _, err := js.PublishMsg(ctx, bad); err != nil {
		t.Fatal(err)
	}
	s := startSub(t, ns, Config{Action: Command{Line: "exit 0", Timeout: 5 * time.Second}, Logger: testLog(t, "dl")}, nil)
	waitFor(t, 20*time.Second, "the dead letter", func() bool { return s.s.Stats().DeadLettered == 1 })
	waitFor(t, 10*time.Second, "nothing pending", func() bool { return settled(t, nc, DefaultDurable) })
	msgs, err := physdtest.StreamMessages(ctx, nc, "PHYSD_ALERTS_DEAD", DefaultDeadLetter)
	if err != nil || len(msgs) != 1 {
		t.Fatalf("dead-letter stream: %d messages, %v", len(msgs), err)
	}
	h := msgs[0].Headers()
	if string(msgs[0].Data()) != string(bad.Data) || h.Get(HeaderSubject) != "physd.a.alert" || h.Get(HeaderStreamSeq) != "1" ||
		h.Get(HeaderAlertID) != "a.truncated" || !strings.Contains(h.Get(HeaderError), "not alert JSON") {
		t.Errorf("dead letter %q, headers %v", msgs[0].Data(), h)
	}
}

// TestDeliverNew: a durable created with DeliverNew skips the alerts
// already stored and keeps its start when opened again without it.
func TestDeliverNew(t *testing.T) {
	ns := natsServer(t)
	nc := connect(t, ns)
	js := alertStream(t, nc)
	publishAlert(t, js, "old", "raised", 1)
	dir := t.TempDir()
	got := filepath.Join(dir, "got")
	cfg := Config{Action: Command{Line: `echo "$PHYSD_ALERT_CAMERA" >> ` + got, Timeout: 5 * time.Second}, DeliverNew: true, Logger: testLog(t, "new")}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := New(ctx, nc, cfg); err != nil {
		t.Fatal(err)
	}
	cfg.DeliverNew = false
	s := startSub(t, ns, cfg, nil)
	publishAlert(t, js, "fresh", "raised", 2)
	waitFor(t, 20*time.Second, "the new alert handled", func() bool { return s.s.Stats().Handled == 1 })
	waitFor(t, 10*time.Second, "nothing pending", func() bool { return settled(t, nc, DefaultDurable) })
	if l := lines(got); !slices.Equal(l, []string{"fresh"}) {
		t.Errorf("the command got %v, want [fresh]", l)
	}
}
