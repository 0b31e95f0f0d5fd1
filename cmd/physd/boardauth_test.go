//go:build !nocv

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/physd/physd/config"
	"github.com/physd/physd/daemon"
	"github.com/physd/physd/internal/physdtest"
	"github.com/physd/physd/wire"
)

// A forged alert never reaches physd alerts: on a board's embedded server
// only physd's own credentials may publish on its subjects. physd alerts
// runs as the subscriber (its seed found from --state-dir) and handles the
// alert physd's identity publishes; an anonymous client cannot connect,
// and the subscriber's own attempts to publish an alert are refused.
func TestForgedAlertNeverReachesAlerts(t *testing.T) {
	dir := t.TempDir()
	cfg := config.Default()
	cfg.NATS.Embedded.Listen = "127.0.0.1:0"
	cfg.HTTP.Listen = ""
	d, err := daemon.New(cfg, daemon.Options{StateDir: dir, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready, done := make(chan struct{}), make(chan error, 1)
	go func() { done <- d.Run(ctx, func() { close(ready) }) }()
	defer func() { cancel(); <-done }()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("daemon: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("daemon not ready in 30 s")
	}
	url := d.NATSURL()

	handled := filepath.Join(dir, "handled")
	actx, acancel := context.WithCancel(context.Background())
	var aout, aerr physdtest.Log
	adone := make(chan int, 1)
	go func() {
		adone <- run(actx, []string{"alerts", "--nats", url, "--state-dir", dir, "--exec", "cat >> " + handled + "; echo >> " + handled}, &aout, &aerr)
	}()
	defer func() {
		acancel()
		select {
		case <-adone:
		case <-time.After(20 * time.Second):
			t.Error("physd alerts did not stop in 20 s")
		}
	}()

	if nc, err := nats.Connect(url, nats.Timeout(5*time.Second)); err == nil {
		nc.Close()
		t.Fatal("an anonymous client connected")
	}
	errs := make(chan error, 8)
	subOpt, err := nats.NkeyOptionFromSeed(daemon.SubscriberSeed(dir))
	if err != nil {
		t.Fatal(err)
	}
	sub, err := nats.Connect(url, subOpt, nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { errs <- err }))
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	js, err := jetstream.New(sub)
	if err != nil {
		t.Fatal(err)
	}
	// physd alerts is up when its durable consumer exists.
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := js.Consumer(ctx, "PHYSD_ESTIMATES", "physd-alerts"); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("physd alerts did not start in 30 s:\n%s", aerr.String())
		}
		time.Sleep(200 * time.Millisecond)
	}

	alert := func(reason string) *nats.Msg {
		end := time.Now().UTC()
		m := nats.NewMsg(wire.Subject("physd", "pendulum", wire.KindAlert))
		m.Data, _ = json.Marshal(wire.Alert{Schema: wire.SchemaAlert, Camera: "pendulum", Time: end, State: wire.AlertRaised, Reasons: []string{reason}})
		m.Header.Set(nats.MsgIdHdr, wire.MsgID("", "pendulum", "alert-raised-"+reason, end.Add(-time.Second), end))
		return m
	}
	// The subscriber forges one, as JetStream and as core NATS.
	pctx, pcancel := context.WithTimeout(ctx, 5*time.Second)
	_, err = js.PublishMsg(pctx, alert("forged-js"))
	pcancel()
	if err == nil {
		t.Error("the subscriber's alert was stored")
	}
	if err := sub.PublishMsg(alert("forged-core")); err != nil {
		t.Fatal(err)
	}
	_ = sub.Flush()
	select {
	case err := <-errs:
		if !errors.Is(err, nats.ErrPermissionViolation) {
			t.Errorf("forged alert: %v, want a permissions violation", err)
		}
	case <-time.After(5 * time.Second):
		t.Error("the subscriber published an alert")
	}
	// physd's own identity publishes one: that one is handled.
	svcOpt, err := nats.NkeyOptionFromSeed(filepath.Join(dir, daemon.ServiceSeedFile))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := nats.Connect(url, svcOpt)
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	sjs, _ := jetstream.New(svc)
	if _, err := sjs.PublishMsg(ctx, alert("genuine")); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(30 * time.Second)
	for {
		b, _ := os.ReadFile(handled)
		if strings.Contains(string(b), "genuine") {
			if strings.Contains(string(b), "forged") {
				t.Errorf("physd alerts handled a forged alert:\n%s", b)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("physd alerts did not handle physd's alert in 30 s:\n%s", aerr.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	if !strings.Contains(aerr.String(), daemon.SubscriberSeedFile) {
		t.Errorf("physd alerts did not say which seed it used:\n%s", aerr.String())
	}

	// physd watch on the board, given nothing: the embedded server refuses
	// it anonymously, and it finds the seed in physd's state directory (as
	// systemd's $STATE_DIRECTORY names it here).
	t.Setenv("STATE_DIRECTORY", dir)
	wctx, wcancel := context.WithTimeout(ctx, 60*time.Second)
	defer wcancel()
	var wout, werr bytes.Buffer
	if code := run(wctx, []string{"watch", "--nats", url, "-n", "1"}, &wout, &werr); code != exitOK || !strings.Contains(wout.String(), "pendulum") {
		t.Errorf("physd watch: exit %d, out %q, err %q", code, wout.String(), werr.String())
	}
}
