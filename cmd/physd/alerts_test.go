package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/physd/physd/internal/physdtest"
	"github.com/physd/physd/wire"
)

// TestAlertsBadInput: each mistake is a usage error naming the flag; an
// unreachable server is an error naming its URL.
func TestAlertsBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "exactly one of --exec and --webhook"},
		{[]string{"--exec", "true", "--webhook", "http://127.0.0.1:1/"}, "exactly one of --exec and --webhook"},
		{[]string{"--webhook", "ftp://user:hunter2@x/"}, "--webhook \"ftp://user:xxxxx@x/\": want an http"},
		{[]string{"--exec", "true", "--backoff", "1s,soon"}, "--backoff: \"soon\" is not a duration"},
		{[]string{"--exec", "true", "--deliver", "yesterday"}, "--deliver \"yesterday\""},
		{[]string{"--exec", "true", "--tls-cert", "c.pem"}, "--tls-cert and --tls-key go together"},
		{[]string{"--exec", "true", "--max-deliver", "0"}, "--max-deliver 0"},
		{[]string{"--exec", "true", "--durable", "my alerts"}, "durable: \"my alerts\" is not a consumer name"},
		{[]string{"--exec", "true", "--dead-letter", "physd.x.alert"}, "dead-letter: \"physd.x.alert\" is consumed by the filter"},
		{[]string{"--exec", "true", "extra"}, "unexpected argument"},
	} {
		code, _, e := physd(t, append([]string{"alerts"}, tc.args...)...)
		if code != exitUsage || !strings.Contains(e, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, e, exitUsage, tc.want)
		}
		if strings.Contains(e, "hunter2") {
			t.Errorf("%v: stderr quotes the password: %q", tc.args, e)
		}
	}
	url := fmt.Sprintf("nats://127.0.0.1:%d", physdtest.FreePort(t))
	code, _, e := physd(t, "alerts", "--nats", url, "--exec", "true")
	if code != exitError || !strings.Contains(e, "connect to "+url) {
		t.Errorf("unreachable NATS: exit %d, stderr %q", code, e)
	}
}

// TestAlertsRunsCommand runs `physd alerts` against a real nats-server
// holding physd's stream and one alert: the command gets it on stdin.
func TestAlertsRunsCommand(t *testing.T) {
	ns := physdtest.StartNATS(t, &server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT, JetStream: true,
		StoreDir: filepath.Join(t.TempDir(), "js"), NoSigs: true, NoLog: true})
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "PHYSD_ESTIMATES", Subjects: []string{"physd.*.alert", "physd.*.*.alert"}}); err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(wire.Alert{Schema: wire.SchemaAlert, Camera: "bridge", State: wire.AlertRaised, Reasons: []string{"f_n drifted"}})
	msg := nats.NewMsg("physd.bridge.alert")
	msg.Data = data
	msg.Header.Set(nats.MsgIdHdr, "bridge.alert-raised.1.2")
	if _, err := js.PublishMsg(ctx, msg); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "alert.json")
	done := make(chan int, 1)
	var errb physdtest.Log
	go func() {
		done <- run(ctx, []string{"alerts", "--nats", ns.ClientURL(), "--exec", `cat > "` + out + `.tmp" && mv "` + out + `.tmp" "` + out + `"`}, &physdtest.Log{}, &errb)
	}()
	for b, _ := os.ReadFile(out); string(b) != string(data); b, _ = os.ReadFile(out) {
		select {
		case code := <-done:
			t.Fatalf("physd alerts exited %d: %s", code, errb.String())
		case <-ctx.Done():
			t.Fatalf("no alert on the command's stdin within 30 s: %q\n%s", b, errb.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	cancel()
	if code := <-done; code != exitOK {
		t.Errorf("exit %d after cancellation: %s", code, errb.String())
	}
	if !strings.Contains(errb.String(), "alert handed to the action") {
		t.Errorf("log lacks the handed-over alert:\n%s", errb.String())
	}
}
