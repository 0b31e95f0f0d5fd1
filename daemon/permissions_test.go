package daemon

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/physd/physd/config"
	"github.com/physd/physd/internal/physdtest"
	"github.com/physd/physd/wire"
)

// Test-only nkey seeds whose public keys are in docs/nats-permissions.conf.
const (
	physdSeed      = "SUACGBKH3O6XXRRBXWCYOC7ETELR72INXPZOO74IUIKT55SULD4PAZN74U"
	subscriberSeed = "SUAOP7NUTALDHRLBTAIQXGGDAJCKEAVCLKYUOIA3I3CL6FHGAXBB3HIBWY"
)

// TestNATSLeastPrivilege runs physd and an alert subscriber against a
// nats-server configured by docs/nats-permissions.conf: physd creates its
// stream and publishes certified estimates, the subscriber consumes them,
// and neither can do what its user is not allowed to.
func TestNATSLeastPrivilege(t *testing.T) {
	opts, err := server.ProcessConfigFile(filepath.Join("..", "docs", "nats-permissions.conf"))
	if err != nil {
		t.Fatal(err)
	}
	port := physdtest.FreePort(t)
	opts.Host, opts.Port, opts.StoreDir, opts.NoSigs, opts.NoLog = "127.0.0.1", port, t.TempDir(), true, true
	physdtest.StartNATS(t, opts)
	url := fmt.Sprintf("nats://127.0.0.1:%d", port)

	cfg := testConfig()
	cfg.NATS.URLs = []string{url}
	cfg.NATS.NKeySeed = config.NewSecret(physdSeed)
	start(t, cfg, t.TempDir())

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	sub := connectSeed(t, url, subscriberSeed)
	consumeEstimate(ctx, t, sub)

	// What each user may not do.
	denied := func(nc *nats.Conn, errs <-chan error, subject string) {
		t.Helper()
		if err := nc.Publish(subject, []byte("{}")); err != nil {
			t.Fatal(err)
		}
		_ = nc.Flush()
		select {
		case err := <-errs:
			if !errors.Is(err, nats.ErrPermissionViolation) {
				t.Errorf("publish to %s: %v, want a permissions violation", subject, err)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("publish to %s was allowed", subject)
		}
	}
	physdErrs := make(chan error, 4)
	p := connectSeed(t, url, physdSeed, nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { physdErrs <- err }))
	denied(p, physdErrs, "$JS.API.STREAM.DELETE.PHYSD_ESTIMATES")
	denied(p, physdErrs, "other.subject")
	subErrs := make(chan error, 4)
	s := connectSeed(t, url, subscriberSeed, nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { subErrs <- err }))
	denied(s, subErrs, "physd.cam.estimate")
	denied(s, subErrs, "$JS.API.STREAM.PURGE.PHYSD_ESTIMATES")
}

// connectSeed connects with an nkey seed.
func connectSeed(t *testing.T, url, seed string, extra ...nats.Option) *nats.Conn {
	t.Helper()
	opt, err := nkeyOption(seed)
	if err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(url, append([]nats.Option{opt}, extra...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// consumeEstimate reads the stream's first certified estimate as the
// subscriber nc, failing the test if it may not or none comes in 60 s; it
// returns the JetStream context it used.
func consumeEstimate(ctx context.Context, t *testing.T, nc *nats.Conn) jetstream.JetStream {
	t.Helper()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	cons, err := js.OrderedConsumer(ctx, "PHYSD_ESTIMATES", jetstream.OrderedConsumerConfig{FilterSubjects: []string{"physd.*.estimate"}})
	if err != nil {
		t.Fatalf("the subscriber cannot consume the stream: %v", err)
	}
	m, err := cons.Next(jetstream.FetchMaxWait(60 * time.Second))
	if err != nil {
		t.Fatalf("no certified estimate reached the subscriber: %v", err)
	}
	if _, err := wire.DecodeEstimate(m.Data()); err != nil {
		t.Fatal(err)
	}
	return js
}
