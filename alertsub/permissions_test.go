package alertsub

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/physd/physd/internal/physdtest"
)

// TestLeastPrivilege runs the subscriber as a NATS user with exactly the
// permissions docs/alerts.md lists (besides those docs/nats-permissions.conf
// gives its alert subscriber): it consumes an alert, records it and
// dead-letters a bad message.
func TestLeastPrivilege(t *testing.T) {
	subPerms := &server.Permissions{
		Publish: &server.SubjectPermission{Allow: []string{
			// docs/nats-permissions.conf's alert subscriber
			"$JS.API.STREAM.INFO.PHYSD_ESTIMATES",
			"$JS.API.CONSUMER.CREATE.PHYSD_ESTIMATES.>",
			"$JS.API.CONSUMER.DURABLE.CREATE.PHYSD_ESTIMATES.>",
			"$JS.API.CONSUMER.INFO.PHYSD_ESTIMATES.>",
			"$JS.API.CONSUMER.DELETE.PHYSD_ESTIMATES.>",
			"$JS.API.CONSUMER.MSG.NEXT.PHYSD_ESTIMATES.>",
			"$JS.ACK.PHYSD_ESTIMATES.>",
			// docs/alerts.md
			"$JS.API.STREAM.NAMES",
			"$JS.API.INFO",
			"$JS.API.STREAM.INFO.KV_physd_alerts_handled",
			"$JS.API.STREAM.CREATE.KV_physd_alerts_handled",
			"$KV.physd_alerts_handled.>",
			"$JS.API.DIRECT.GET.KV_physd_alerts_handled.>",
			DefaultDeadLetter,
		}},
		Subscribe: &server.SubjectPermission{Allow: []string{"_INBOX.>"}},
	}
	ns := physdtest.StartNATS(t, &server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT, JetStream: true,
		StoreDir: filepath.Join(t.TempDir(), "js"), NoSigs: true, NoLog: true,
		Users: []*server.User{{Username: "admin", Password: "a"}, {Username: "alerts", Password: "s", Permissions: subPerms}}})
	url := func(user, pass string) string { return fmt.Sprintf("nats://%s:%s@%s", user, pass, ns.Addr()) }
	admin, err := nats.Connect(url("admin", "a"))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	js := alertStream(t, admin)
	dead, err := admin.SubscribeSync(DefaultDeadLetter)
	if err != nil {
		t.Fatal(err)
	}
	admin.Flush()
	publishAlert(t, js, "a", "raised", 1)
	bad := nats.NewMsg("physd.a.alert")
	bad.Data = []byte("{}")
	bad.Header.Set(nats.MsgIdHdr, "bad")
	if _, err := js.PublishMsg(context.Background(), bad); err != nil {
		t.Fatal(err)
	}
	denied := make(chan error, 16)
	nc, err := nats.Connect(url("alerts", "s"), nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		select {
		case denied <- err:
		default:
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := New(ctx, nc, Config{Action: Command{Line: "cat > /dev/null", Timeout: 5 * time.Second}, AckWait: 2 * time.Second, Logger: testLog(t, "least")})
	if err != nil {
		t.Fatal(err)
	}
	rctx, rcancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(rctx) }()
	defer func() { rcancel(); <-done }()
	waitFor(t, 20*time.Second, "the alert handled and the bad message dead-lettered", func() bool {
		st := s.Stats()
		return st.Handled == 1 && st.DeadLettered == 1
	})
	if _, err := dead.NextMsg(5 * time.Second); err != nil {
		t.Errorf("dead letter: %v", err)
	}
	if ok, err := s.handled.done(ctx, "a.alert-raised.1767225596000000000.1767225601000000000"); !ok || err != nil {
		t.Errorf("the handled alert is not recorded: %v %v", ok, err)
	}
	select {
	case err := <-denied:
		t.Errorf("permission error: %v", err)
	default:
	}
}
