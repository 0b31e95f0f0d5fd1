package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/physd/physd/alertsub"
	"github.com/physd/physd/fleet"
	"github.com/physd/physd/internal/physdtest"
)

// TestFleetBadInput: each mistake is a usage error saying what is wrong.
func TestFleetBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "want init, creds, add, rm, ls or revoke"},
		{[]string{"join"}, "want init, creds, add, rm, ls or revoke"},
		{[]string{"init"}, "want --keys DIR"},
		{[]string{"creds", "b1"}, "want --keys DIR"},
		{[]string{"creds", "--keys", "k"}, "name one or more boards"},
		{[]string{"revoke", "b1"}, "want --keys DIR and one or more boards"},
		{[]string{"rm", "--keys", "k", "b1"}, "--keys goes with add"},
		{[]string{"add"}, "name one or more boards"},
		{[]string{"add", "b.1"}, "board \"b.1\""},
		{[]string{"add", "--domain", "d", "b1", "b2"}, "--domain goes with add and one board"},
		{[]string{"add", "--replicas", "0", "b1"}, "--replicas 0"},
		{[]string{"ls", "b1"}, "unexpected argument"},
		{[]string{"add", "--tls-cert", "c.pem", "b1"}, "--tls-cert and --tls-key go together"},
	} {
		code, _, e := physd(t, append([]string{"fleet"}, tc.args...)...)
		if code != exitUsage || !strings.Contains(e, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, e, exitUsage, tc.want)
		}
	}
}

// TestFleetAddLs runs `physd fleet add` and `ls` against a one-node hub
// (no boards connected: ls shows them never active).
func TestFleetAddLs(t *testing.T) {
	ns := physdtest.StartNATS(t, &server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT, JetStream: true,
		JetStreamDomain: "hub", StoreDir: filepath.Join(t.TempDir(), "js"), NoSigs: true, NoLog: true})
	code, out, e := physd(t, "fleet", "add", "--nats", ns.ClientURL(), "--replicas", "1", "b1", "b2")
	if code != exitOK || !strings.Contains(out, "sourcing PHYSD_ESTIMATES from domain b2 as fleet.b2.physd.>") {
		t.Fatalf("add: exit %d, out %q, err %q", code, out, e)
	}
	code, out, e = physd(t, "fleet", "ls", "--nats", ns.ClientURL())
	if code != exitOK || !strings.Contains(out, "2 boards, 0 messages") || !strings.Contains(out, "b1 ") {
		t.Fatalf("ls: exit %d, out %q, err %q", code, out, e)
	}
	code, out, e = physd(t, "fleet", "rm", "--nats", ns.ClientURL(), "b1")
	if code != exitOK || !strings.Contains(out, "no longer sourcing board b1") {
		t.Fatalf("rm: exit %d, out %q, err %q", code, out, e)
	}
}

// TestWatchFleetBadInput: --fleet with --diag (the aggregate has no
// diagnostics) and a --board that is no node name are usage errors.
func TestWatchFleetBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--fleet", "--diag"}, "--diag and --fleet"},
		{[]string{"--board", "b 1"}, "--board \"b 1\""},
	} {
		code, _, e := physd(t, append([]string{"watch"}, tc.args...)...)
		if code != exitUsage || !strings.Contains(e, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, e, exitUsage, tc.want)
		}
	}
}

// TestFleetAccountsCLI runs `physd fleet init`, `add --keys`, `creds`,
// `ls` and `revoke` against a one-node hub in operator mode with the
// hub-accounts.conf init writes (the real-process fleet test,
// fleet.TestFleetAccounts, has boards and a 3-node hub).
func TestFleetAccountsCLI(t *testing.T) {
	dir := t.TempDir()
	keys := filepath.Join(dir, "keys")
	code, out, e := physd(t, "fleet", "init", "--keys", keys)
	if code != exitOK || !strings.Contains(out, "account FLEET A") {
		t.Fatalf("init: exit %d, out %q, err %q", code, out, e)
	}
	if code, _, e := physd(t, "fleet", "init", "--keys", keys); code == exitOK || !strings.Contains(e, "already holds") {
		t.Errorf("init again: exit %d, err %q", code, e)
	}
	// include is relative to the including file: next to it, as on a hub.
	conf := filepath.Join(keys, "hub.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf("include %s\nresolver { type: full, dir: %q }\n",
		fleet.HubAccountsConf, filepath.Join(dir, "jwt"))), 0o600); err != nil {
		t.Fatal(err)
	}
	opts, err := server.ProcessConfigFile(conf)
	if err != nil {
		t.Fatalf("hub-accounts.conf: %v", err)
	}
	opts.Host, opts.Port, opts.JetStream, opts.JetStreamDomain = "127.0.0.1", server.RANDOM_PORT, true, "hub"
	opts.StoreDir, opts.NoSigs, opts.NoLog = filepath.Join(dir, "js"), true, true
	ns := physdtest.StartNATS(t, opts)

	// Without credentials the hub refuses; --keys uses the operator's.
	if code, _, _ := physd(t, "fleet", "ls", "--nats", ns.ClientURL()); code == exitOK {
		t.Error("ls without credentials: not refused")
	}
	code, out, e = physd(t, "fleet", "add", "--keys", keys, "--nats", ns.ClientURL(), "--replicas", "1", "b1")
	if code != exitOK || !strings.Contains(out, "b1: credentials "+filepath.Join(keys, "boards", "b1.creds")+" (copy to the board") ||
		!strings.Contains(out, "sourcing PHYSD_ESTIMATES from domain b1") {
		t.Fatalf("add --keys: exit %d, out %q, err %q", code, out, e)
	}
	code, out, e = physd(t, "fleet", "add", "--keys", keys, "--nats", ns.ClientURL(), "b1")
	if code != exitOK || !strings.Contains(out, "issued before") {
		t.Fatalf("add --keys again: exit %d, out %q, err %q", code, out, e)
	}
	code, out, e = physd(t, "fleet", "ls", "--creds", filepath.Join(keys, fleet.OperatorCreds), "--nats", ns.ClientURL())
	if code != exitOK || !strings.Contains(out, "1 boards") {
		t.Fatalf("ls: exit %d, out %q, err %q", code, out, e)
	}
	subCreds := filepath.Join(dir, "alerts.creds")
	if code, _, e := physd(t, "fleet", "creds", "--keys", keys, "--subscriber", subCreds); code != exitOK {
		t.Fatalf("creds --subscriber: exit %d, err %q", code, e)
	}
	// The subscriber reads the aggregate and cannot delete it.
	nc, err := nats.Connect(ns.ClientURL(), nats.UserCredentials(subCreds), nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := js.Stream(ctx, fleet.DefaultStream); err != nil {
		t.Errorf("subscriber: stream info: %v", err)
	}
	if err := js.DeleteStream(ctx, fleet.DefaultStream); err == nil {
		t.Error("subscriber deleted the aggregate")
	}
	// physd alerts' subscriber sets up (durable consumer, bucket of
	// handled ids) with these credentials alone.
	actx, acancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer acancel()
	if _, err := alertsub.New(actx, nc, alertsub.Config{Stream: fleet.DefaultStream, Durable: "oncall",
		Filters: []string{"fleet.*.physd.*.alert"}, Action: alertsub.Command{Line: "true"}}); err != nil {
		t.Errorf("physd alerts with the subscriber's credentials: %v", err)
	}

	code, out, e = physd(t, "fleet", "revoke", "--keys", keys, "--nats", ns.ClientURL(), "b1")
	if code != exitOK || !strings.Contains(out, "b1: revoked") {
		t.Fatalf("revoke: exit %d, out %q, err %q", code, out, e)
	}
	is, err := fleet.LoadIssuer(keys)
	if err != nil {
		t.Fatal(err)
	}
	revoked, err := is.Revoked()
	if err != nil || len(revoked) != 1 {
		t.Errorf("revoked users: %v, %v; want b1's one", revoked, err)
	}
	if code, _, e := physd(t, "fleet", "revoke", "--keys", keys, "--nats", ns.ClientURL(), "b9"); code == exitOK || !strings.Contains(e, "no credentials were issued") {
		t.Errorf("revoke b9: exit %d, err %q", code, e)
	}
}

// TestWatchFleetNoStream: physd watch --fleet on a hub without the
// aggregate stream fails at once (what it asks again for is a hub that
// does not answer in time, not a stream that is not there).
func TestWatchFleetNoStream(t *testing.T) {
	ns := physdtest.StartNATS(t, &server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT, JetStream: true,
		StoreDir: filepath.Join(t.TempDir(), "js"), NoSigs: true, NoLog: true})
	start := time.Now()
	code, _, e := physd(t, "watch", "--fleet", "--nats", ns.ClientURL(), "-n", "1")
	if code == exitOK || !strings.Contains(e, "stream not found") || time.Since(start) > 5*time.Second {
		t.Errorf("exit %d after %v, stderr %q; want a failure at once, stream not found", code, time.Since(start), e)
	}
}
