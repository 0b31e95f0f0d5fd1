package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"

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
