package daemon

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

// TestEmbeddedServerAuthenticates attacks the embedded server as a
// process on the same board would: an anonymous client and one with a
// key of its own are refused; the subscriber's credentials, which physd
// created 0600 in the state directory, read the estimates and consume the
// stream but cannot publish on physd's subjects nor delete, purge or
// change its stream; and physd's credentials survive a restart.
func TestEmbeddedServerAuthenticates(t *testing.T) {
	dir := t.TempDir()
	r := start(t, testConfig(), dir)
	url := r.d.NATSURL()

	if nc, err := nats.Connect(url, nats.Timeout(5*time.Second)); err == nil {
		nc.Close()
		t.Fatal("an anonymous client connected to the embedded server")
	} else if !errors.Is(err, nats.ErrAuthorization) {
		t.Errorf("anonymous: %v, want an authorization violation", err)
	}
	stranger, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	seed, _ := stranger.Seed()
	own, err := nkeyOption(string(seed))
	if err != nil {
		t.Fatal(err)
	}
	if nc, err := nats.Connect(url, nats.Timeout(5*time.Second), own); err == nil {
		nc.Close()
		t.Fatal("a client with an unknown nkey connected")
	}

	for _, f := range []string{ServiceSeedFile, SubscriberSeedFile} {
		st, err := os.Stat(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", f, st.Mode().Perm())
		}
	}

	errs := make(chan error, 16)
	auth, err := r.d.SubscriberOptions()
	if err != nil || len(auth) != 1 {
		t.Fatalf("subscriber options %v, %v", auth, err)
	}
	sub, err := nats.Connect(url, append(auth, nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { errs <- err }))...)
	if err != nil {
		t.Fatalf("the subscriber's credentials: %v", err)
	}
	defer sub.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	js := consumeEstimate(ctx, t, sub)
	if _, err := sub.SubscribeSync("physd.>"); err != nil {
		t.Fatal(err)
	}
	// What the subscriber may not do: each is refused by the server.
	for _, subject := range []string{"physd.pendulum.alert", "physd.pendulum.estimate", "physd.x.y.alert",
		"$JS.API.STREAM.DELETE.PHYSD_ESTIMATES", "$JS.API.STREAM.PURGE.PHYSD_ESTIMATES",
		"$JS.API.STREAM.UPDATE.PHYSD_ESTIMATES", "$JS.API.STREAM.MSG.DELETE.PHYSD_ESTIMATES", "$JS.API.STREAM.CREATE.FORGED"} {
		if err := sub.Publish(subject, []byte(`{"schema":"physd.alert/v1"}`)); err != nil {
			t.Fatal(err)
		}
		_ = sub.Flush()
		select {
		case err := <-errs:
			if !errors.Is(err, nats.ErrPermissionViolation) || !strings.Contains(err.Error(), subject) {
				t.Errorf("publish to %s: %v, want a permissions violation", subject, err)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("the subscriber published to %s", subject)
		}
	}
	info, err := js.Stream(ctx, "PHYSD_ESTIMATES")
	if err != nil {
		t.Fatal(err)
	}
	if st := info.CachedInfo().State; st.Msgs == 0 {
		t.Errorf("the stream lost its messages: %+v", st)
	}
	r.stop()

	// A restart keeps the credentials: the subscriber's seed still works.
	before, _ := os.ReadFile(SubscriberSeed(dir))
	r2 := start(t, testConfig(), dir)
	after, _ := os.ReadFile(SubscriberSeed(dir))
	if string(before) != string(after) {
		t.Error("the subscriber's seed changed across a restart")
	}
	auth, _ = r2.d.SubscriberOptions()
	nc, err := nats.Connect(r2.d.NATSURL(), auth...)
	if err != nil {
		t.Fatalf("the subscriber's seed after a restart: %v", err)
	}
	nc.Close()
}

// A seed file that others can read is made 0600 again; one that does not
// parse stops the start with an error naming the file, never quoting it.
func TestEmbeddedCredentialsFiles(t *testing.T) {
	dir := t.TempDir()
	log := slog.New(slog.DiscardHandler)
	if _, err := loadOrCreateCreds(dir, log); err != nil {
		t.Fatal(err)
	}
	path := SubscriberSeed(dir)
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := loadOrCreateCreds(dir, log); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v after a start, want 0600", st.Mode().Perm())
	}
	if err := os.WriteFile(path, []byte("SUAsecretbutbroken\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := loadOrCreateCreds(dir, log)
	if err == nil || !strings.Contains(err.Error(), path) || strings.Contains(err.Error(), "secretbutbroken") {
		t.Errorf("a broken seed: %v", err)
	}
}
