//go:build !nocv

package fleet

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/physd/physd/daemon"
	"github.com/physd/physd/internal/physdtest"
	"github.com/physd/physd/wire"
)

var flagQuorumOutage = flag.Duration("fleet.quorum-outage", 60*time.Second, "how long two of the three hub nodes stay down in TestFleetAccounts")

// hostileConf is the hostile board's own nats-server: a leaf node of every
// hub node with board b3's valid credentials, in JetStream domain b3, and
// none of physd's restraint (no deny lists: whatever the hub lets
// through, it sends).
func hostileConf(name string, port int, store string, hub []hubNode, creds string) string {
	var urls []string
	for _, h := range hub {
		urls = append(urls, fmt.Sprintf("%q", fmt.Sprintf("nats-leaf://127.0.0.1:%d", h.leaf)))
	}
	return fmt.Sprintf(`server_name: %s
listen: 127.0.0.1:%d
jetstream { store_dir: %q, domain: %s }
leafnodes {
  reconnect: "1s"
  remotes: [ { urls: [%s], credentials: %q } ]
}
`, name, port, store, name, strings.Join(urls, ", "), creds)
}

// nkeyFile is the connection option of the nkey seed in path.
func nkeyFile(t *testing.T, path string) nats.Option {
	t.Helper()
	o, err := nats.NkeyOptionFromSeed(path)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// runPhysd runs the physd binary to its end (within 40 s) and returns
// its output.
func runPhysd(ctx context.Context, t *testing.T, bin string, args ...string) (string, error) {
	t.Helper()
	p := physdtest.Start(t, "physd "+strings.Join(args[:2], " "), bin, args)
	if !until(ctx, 40*time.Second, p.Exited) {
		p.Kill()
		return p.Log.String(), fmt.Errorf("physd %v did not finish", args[:2])
	}
	err := p.Stop(time.Second)
	return p.Log.String(), err
}

// TestFleetAccounts runs a hub with accounts (docs/fleet.md, "Accounts")
// as real processes on loopback: a 3-node hub cluster in operator mode
// (physd fleet init's hub-accounts.conf and a full resolver on each node),
// two honest physd boards b1 and b2 with the credentials physd fleet add
// issued them, and a hostile board: a nats-server of its own with board
// b3's valid credentials and no restraint. The hostile board tries to
// publish on the other boards' and the aggregate's subjects, to read,
// purge and delete b1's stream and the hub's aggregate, to listen to what
// is not its own, to source b1 and the aggregate into a stream of its own,
// and to pass its messages off as b1's; each attempt must be refused (and
// is printed). A read-only subscriber's credentials read the aggregate and
// cannot delete it; a board's credentials do not connect as a client.
// Then physd fleet revoke b3: its leaf node connection is closed and its
// next ones refused, without a hub restart. Then two of the three hub
// nodes are killed for -fleet.quorum-outage (60 s) and started again:
// the boards certify and store throughout, and every estimate of b1 and
// b2 is in the aggregate exactly once, none forged.
func TestFleetAccounts(t *testing.T) {
	if testing.Short() {
		t.Skip("fleet: real processes and a 60 s outage of two hub nodes; not in -short")
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute+*flagQuorumOutage)
	defer cancel()
	dir := t.TempDir()
	physdBin := physdtest.Build(t, dir, "github.com/physd/physd/cmd/physd")
	natsBin := physdtest.Build(t, dir, "github.com/nats-io/nats-server/v2")

	// The operator's keys and the hub's accounts, by the operator's command.
	keys := filepath.Join(dir, "keys")
	out, err := runPhysd(ctx, t, physdBin, "fleet", "init", "--keys", keys)
	if err != nil {
		t.Fatalf("physd fleet init: %v\n%s", err, out)
	}
	t.Logf("physd fleet init:\n%s", strings.TrimSpace(out))
	accounts, err := os.ReadFile(filepath.Join(keys, HubAccountsConf))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, HubAccountsConf), accounts, 0o600); err != nil {
		t.Fatal(err)
	}

	hub, startHub := startHubCluster(ctx, t, dir, natsBin, func(store string) string {
		return fmt.Sprintf("include %s\nresolver { type: full, dir: %q, allow_delete: false, interval: \"2m\" }\n", HubAccountsConf, filepath.Join(store, "jwt"))
	})
	var hubURLs []string
	for _, h := range hub {
		hubURLs = append(hubURLs, fmt.Sprintf("nats://127.0.0.1:%d", h.client))
	}
	hubURL := strings.Join(hubURLs, ",")

	// Each board's credentials, by the operator.
	honest := []string{"b1", "b2"}
	const hostileName = "b3"
	out, err = runPhysd(ctx, t, physdBin, "fleet", "creds", "--keys", keys, "b1", "b2", hostileName)
	if err != nil {
		t.Fatalf("physd fleet creds: %v\n%s", err, out)
	}
	t.Logf("physd fleet creds:\n%s", strings.TrimSpace(out))
	creds := func(b string) string { return filepath.Join(keys, BoardsDir, b+".creds") }

	boards := map[string]*physdtest.Process{}
	boardPort := map[string]int{}
	for i, b := range honest {
		conf := filepath.Join(dir, b+".yaml")
		boardPort[b] = physdtest.FreePort(t)
		if err := os.WriteFile(conf, []byte(boardConf(b, boardPort[b], hub, i+1, creds(b))), 0o600); err != nil {
			t.Fatal(err)
		}
		boards[b] = physdtest.Start(t, b, physdBin, []string{"run", "--quiet", "--config", conf, "--state-dir", filepath.Join(dir, b+"-state")})
	}
	hostilePort := physdtest.FreePort(t)
	hostileConfFile := filepath.Join(dir, "hostile.conf")
	if err := os.WriteFile(hostileConfFile, []byte(hostileConf(hostileName, hostilePort, filepath.Join(dir, "hostile"), hub, creds(hostileName))), 0o600); err != nil {
		t.Fatal(err)
	}
	hostile := physdtest.Start(t, "hostile "+hostileName, natsBin, []string{"-c", hostileConfFile})

	fail := func(format string, args ...any) {
		t.Helper()
		for _, b := range honest {
			t.Logf("%s log (tail):\n%s", b, tail(boards[b].Log.String()))
		}
		t.Logf("hostile log (tail):\n%s", tail(hostile.Log.String()))
		for _, h := range hub {
			if h.proc != nil {
				t.Logf("%s log (tail):\n%s", h.name, tail(h.proc.Log.String()))
			}
		}
		t.Fatalf(format, args...)
	}
	connected := func(nodes ...hubNode) []string { return leafNames(ctx, nodes...) }
	all := append(slices.Clone(honest), hostileName)
	if !until(ctx, 40*time.Second, func() bool { return slices.Equal(connected(hub...), all) }) {
		fail("boards connected to the hub: %v, want %v", connected(hub...), all)
	}

	op, err := nats.Connect(hubURL, nats.UserCredentials(filepath.Join(keys, OperatorCreds)),
		nats.MaxReconnects(-1), nats.ReconnectWait(250*time.Millisecond))
	if err != nil {
		fail("operator: %v", err)
	}
	defer op.Close()
	opJS, err := jetstream.New(op)
	if err != nil {
		t.Fatal(err)
	}
	aggregated := func() uint64 {
		sctx, scancel := context.WithTimeout(ctx, 2*time.Second)
		defer scancel()
		s, err := opJS.Stream(sctx, DefaultStream)
		if err != nil {
			return 0
		}
		return s.CachedInfo().State.Msgs
	}
	for _, b := range honest {
		wctx, wcancel := context.WithTimeout(ctx, 2*time.Minute)
		_, ok := boards[b].Log.Wait(wctx, "certified estimate", func(physdtest.Record) bool { return true })
		wcancel()
		if !ok {
			fail("board %s never certified", b)
		}
	}
	// The hostile board: a client of its own server, which keeps a stream
	// as a board does.
	hc, err := nats.Connect(fmt.Sprintf("nats://127.0.0.1:%d", hostilePort), nats.Timeout(5*time.Second))
	if err != nil {
		fail("hostile client: %v", err)
	}
	defer hc.Close()
	hjs, err := jetstream.New(hc)
	if err != nil {
		t.Fatal(err)
	}
	_, err = hjs.CreateStream(ctx, jetstream.StreamConfig{Name: DefaultBoardStream, Subjects: wire.StreamSubjects("physd"), Storage: jetstream.FileStorage})
	if err != nil {
		fail("hostile board: its own stream: %v", err)
	}

	// The aggregate stream, by the operator (once the boards have their
	// streams: a source whose stream is not there yet is retried after
	// ever longer pauses).
	var addOut string
	if !until(ctx, 60*time.Second, func() bool {
		addOut, err = runPhysd(ctx, t, physdBin, "fleet", "add", "--creds", filepath.Join(keys, OperatorCreds), "--nats", hubURL, "--replicas", "3", "b1", "b2", hostileName)
		return err == nil
	}) {
		fail("physd fleet add: %v\n%s", err, addOut)
	}
	t.Logf("physd fleet add:\n%s", strings.TrimSpace(addOut))
	if !until(ctx, 60*time.Second, func() bool {
		msgs, err := physdtest.StreamMessages(ctx, op, DefaultStream, Subject("b1", "physd.*.estimate"))
		return err == nil && len(msgs) > 0
	}) {
		fail("no estimate of b1 in the aggregate after 60 s (%d messages)", aggregated())
	}

	attempts := 0
	refusal := func(what string, err error) {
		t.Helper()
		attempts++
		if err == nil {
			fail("hostile board: %s: not refused", what)
		}
		t.Logf("REFUSED %-62s %v", what+":", err)
	}

	// 1. Publish on another board's, the aggregate's and the deliveries'
	// subjects.
	// (Not on the hostile board's own subjects, physd.>, which its own
	// stream keeps and the aggregate sources, as fleet.b3.physd.>.) The
	// operator, with every permission, listens on the hub.
	forgedSubjects := []string{Subject("b1", "physd.pend.estimate"), DeliverPrefix("b1") + ".S.0123456789",
		"$JS.b1.API.STREAM.INFO.PHYSD_ESTIMATES", "$JS.hub.API.STREAM.DELETE." + DefaultStream, "$JS.API.STREAM.DELETE." + DefaultStream}
	seen := make(chan *nats.Msg, 1024)
	for _, s := range forgedSubjects {
		sub, err := op.ChanSubscribe(s, seen)
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Unsubscribe()
	}
	if err := op.Flush(); err != nil {
		t.Fatal(err)
	}
	for _, s := range forgedSubjects {
		if err := hc.Publish(s, []byte(`{"schema":"forged","node":"b1"}`)); err != nil {
			t.Fatal(err)
		}
	}
	if err := hc.Flush(); err != nil {
		t.Fatal(err)
	}
	reached := map[string]bool{}
	for wait := time.After(3 * time.Second); ; {
		var m *nats.Msg
		select {
		case m = <-seen:
		case <-wait:
		}
		if m == nil {
			break
		}
		if strings.Contains(string(m.Data), `"forged"`) {
			reached[m.Subject] = true
		}
	}
	for _, s := range forgedSubjects {
		var err error
		if !reached[s] {
			err = fmt.Errorf("the hub's operator, listening on it, got nothing in 3 s")
		}
		refusal("publish "+s, err)
	}

	// 2. Read, purge, delete b1's stream through its domain, and the
	// hub's aggregate through the hub's.
	for _, domain := range []string{"b1", "hub"} {
		stream := DefaultBoardStream
		if domain == "hub" {
			stream = DefaultStream
		}
		djs, err := jetstream.NewWithDomain(hc, domain)
		if err != nil {
			t.Fatal(err)
		}
		rctx, rcancel := context.WithTimeout(ctx, 2*time.Second)
		_, err = djs.Stream(rctx, stream)
		rcancel()
		refusal(fmt.Sprintf("stream info %s (domain %s)", stream, domain), err)
		rctx, rcancel = context.WithTimeout(ctx, 2*time.Second)
		_, err = djs.CreateOrUpdateConsumer(rctx, stream, jetstream.ConsumerConfig{AckPolicy: jetstream.AckNonePolicy})
		rcancel()
		refusal(fmt.Sprintf("read %s (consumer, domain %s)", stream, domain), err)
		for _, api := range []string{"STREAM.MSG.GET." + stream, "DIRECT.GET." + stream, "STREAM.PURGE." + stream, "STREAM.DELETE." + stream,
			"STREAM.UPDATE." + stream} {
			rctx, rcancel := context.WithTimeout(ctx, 2*time.Second)
			_, err := hc.RequestWithContext(rctx, "$JS."+domain+".API."+api, []byte(`{"seq":1}`))
			rcancel()
			refusal(fmt.Sprintf("request $JS.%s.API.%s", domain, api), err)
		}
	}

	// 3. Source b1's stream and the aggregate into a stream of its own.
	sctx, scancel := context.WithTimeout(ctx, 10*time.Second)
	stolenAt := time.Now()
	_, err = hjs.CreateStream(sctx, jetstream.StreamConfig{Name: "STOLEN", Storage: jetstream.FileStorage, Sources: []*jetstream.StreamSource{
		{Name: DefaultBoardStream, External: &jetstream.ExternalStream{APIPrefix: "$JS.b1.API"}},
		{Name: DefaultStream, External: &jetstream.ExternalStream{APIPrefix: "$JS.hub.API"}},
	}})
	scancel()
	if err != nil {
		fail("hostile board: creating a stream on its own server: %v", err)
	}
	// Own messages: its stream, as a board has, with one honest estimate
	// and two that claim to be b1's (a copy of one of b1's, and one made
	// up with a b1 id).
	var b1msgs []jetstream.Msg
	if !until(ctx, 20*time.Second, func() bool {
		b1msgs, err = physdtest.StreamMessages(ctx, op, DefaultStream, Subject("b1", "physd.*.estimate"))
		if err != nil {
			t.Logf("operator: reading b1's estimates in the aggregate: %v", err)
		}
		return err == nil && len(b1msgs) > 0
	}) {
		fail("b1's estimates in the aggregate: %d, %v", len(b1msgs), err)
	}
	genuine, err := wire.DecodeEstimate(b1msgs[0].Data())
	if err != nil {
		t.Fatal(err)
	}
	own := *genuine
	own.Node = hostileName
	madeUp := *genuine
	madeUp.WindowStart = madeUp.WindowStart.Add(time.Hour)
	madeUp.WindowEnd = madeUp.WindowEnd.Add(time.Hour)
	madeUp.Gamma0 *= 2
	for _, e := range []*wire.Estimate{&own, genuine, &madeUp} {
		data, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		m := nats.NewMsg(wire.SubjectOf("physd", e))
		m.Data = data
		m.Header.Set(nats.MsgIdHdr, e.ID())
		if _, err := hjs.PublishMsg(ctx, m); err != nil {
			fail("hostile board: publishing into its own stream: %v", err)
		}
	}
	// The aggregate copies them under fleet.b3 (the credentials' board).
	var forged []jetstream.Msg
	if !until(ctx, 30*time.Second, func() bool {
		forged, err = physdtest.StreamMessages(ctx, op, DefaultStream, Subject(hostileName, ">"))
		return err == nil && len(forged) >= 3
	}) {
		fail("the hostile board's 3 messages in the aggregate: %d (%v)", len(forged), err)
	}
	for _, m := range forged {
		err := CheckClaim(m.Subject(), m.Headers().Get(nats.MsgIdHdr), m.Data())
		e, _ := wire.DecodeEstimate(m.Data())
		if e != nil && e.Node == hostileName {
			if err != nil {
				fail("the hostile board's own estimate refused: %v", err)
			}
			t.Logf("accepted: its own estimate, as %s (%s)", m.Subject(), m.Headers().Get(nats.MsgIdHdr))
			continue
		}
		refusal("claim b1's name ("+m.Headers().Get(nats.MsgIdHdr)+")", err)
	}
	// The sources have 10 s (a source tries its first consumer at once,
	// and again within seconds when nobody answers).
	if d := 10*time.Second - time.Since(stolenAt); d > 0 {
		time.Sleep(d)
	}
	ictx, icancel := context.WithTimeout(ctx, 5*time.Second)
	st, err := hjs.Stream(ictx, "STOLEN")
	icancel()
	if err != nil {
		t.Fatal(err)
	}
	info := st.CachedInfo()
	for _, si := range info.Sources {
		var err error
		if info.State.Msgs == 0 {
			err = fmt.Errorf("STOLEN holds 0 messages after %v", time.Since(stolenAt).Round(time.Second))
			if si.Error != nil {
				err = fmt.Errorf("%w (source error: %v)", err, si.Error)
			}
		}
		refusal(fmt.Sprintf("source %s via %s", si.Name, si.External.APIPrefix), err)
	}

	dctx, dcancel := context.WithTimeout(ctx, 5*time.Second)
	err = hjs.DeleteStream(dctx, "STOLEN")
	dcancel()
	if err != nil {
		t.Fatal(err)
	}

	// 4. Listen to everything, for 5 s, while the hostile board itself
	// sends nothing: nothing of the other boards' or the aggregate's.
	overheard, err := hc.SubscribeSync(">")
	if err != nil {
		t.Fatal(err)
	}
	var heard []string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		m, err := overheard.NextMsg(time.Until(deadline))
		if err != nil {
			break
		}
		// A token, not a substring: an inbox's random token holds "b1"
		// now and then.
		tokens := strings.Split(m.Subject, ".")
		if slices.Contains(tokens, "b1") || slices.Contains(tokens, "b2") || strings.HasPrefix(m.Subject, SubjectRoot+".") ||
			strings.Contains(string(m.Data), `"node":"b1"`) || strings.Contains(string(m.Data), `"node":"b2"`) {
			heard = append(heard, m.Subject)
		}
	}
	if err := overheard.Unsubscribe(); err != nil {
		t.Fatal(err)
	}
	var herr error
	if len(heard) == 0 {
		herr = fmt.Errorf("a subscription to > on the hostile board got nothing of b1's, b2's or the aggregate's in 5 s")
	} else {
		t.Logf("hostile board overheard: %q", heard[:min(len(heard), 10)])
	}
	refusal("listen to the other boards and the aggregate", herr)
	if len(heard) > 0 {
		t.Logf("overheard: %v", heard)
	}

	// The honest boards' streams are whole: on each board, with its own
	// subscriber's key, the stream starts at sequence 1.
	for _, b := range honest {
		bnc, err := nats.Connect(fmt.Sprintf("nats://127.0.0.1:%d", boardPort[b]),
			nkeyFile(t, daemon.SubscriberSeed(filepath.Join(dir, b+"-state"))))
		if err != nil {
			fail("%s's own server: %v", b, err)
		}
		bjs, err := jetstream.New(bnc)
		if err != nil {
			t.Fatal(err)
		}
		ictx, icancel := context.WithTimeout(ctx, 5*time.Second)
		s, err := bjs.Stream(ictx, DefaultBoardStream)
		icancel()
		if err != nil {
			fail("%s's stream on the board: %v", b, err)
		}
		if st := s.CachedInfo().State; st.FirstSeq != 1 || st.Msgs == 0 {
			fail("%s's stream: first sequence %d, %d messages: not whole", b, st.FirstSeq, st.Msgs)
		} else {
			t.Logf("%s's stream on the board after the attacks: sequences %d to %d, %d messages", b, st.FirstSeq, st.LastSeq, st.Msgs)
		}
		bnc.Close()
	}
	if !until(ctx, 10*time.Second, func() bool { return aggregated() > 0 }) {
		fail("the aggregate is empty after the attacks")
	}

	// The subscriber's credentials read and delete nothing; a board's do
	// not make a client.
	violations := make(chan error, 8)
	sub, err := nats.Connect(hubURL, nats.UserCredentials(filepath.Join(keys, SubscriberCreds)),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			select {
			case violations <- err:
			default:
			}
		}))
	if err != nil {
		fail("subscriber: %v", err)
	}
	subJS, _ := jetstream.New(sub)
	rctx, rcancel := context.WithTimeout(ctx, 5*time.Second)
	if _, err := subJS.Stream(rctx, DefaultStream); err != nil {
		fail("subscriber: stream info: %v", err)
	}
	rcancel()
	violation := func() error {
		select {
		case err := <-violations:
			return err
		case <-time.After(time.Second):
			return nil
		}
	}
	rctx, rcancel = context.WithTimeout(ctx, 2*time.Second)
	err = subJS.DeleteStream(rctx, DefaultStream)
	rcancel()
	t.Logf("REFUSED %-62s %v (%v)", "subscriber: delete "+DefaultStream+":", err, violation())
	if err == nil {
		fail("subscriber deleted the aggregate")
	}
	rctx, rcancel = context.WithTimeout(ctx, 2*time.Second)
	_, err = sub.RequestWithContext(rctx, "$JS.API.STREAM.PURGE."+DefaultStream, nil)
	rcancel()
	t.Logf("REFUSED %-62s %v (%v)", "subscriber: purge "+DefaultStream+":", err, violation())
	if err == nil {
		fail("subscriber purged the aggregate")
	}
	if !until(ctx, 10*time.Second, func() bool { return aggregated() > 0 }) {
		fail("the aggregate is empty after the subscriber's attempts")
	}
	sub.Close()
	_, err = nats.Connect(hubURL, nats.UserCredentials(creds("b1")), nats.Timeout(3*time.Second))
	refusal("b1's credentials as a client connection", err)
	// (Once more if the hub is slow to make its consumer: physd watch
	// gives up after 10 s.)
	var watchOut string
	if !until(ctx, 60*time.Second, func() bool {
		watchOut, err = runPhysd(ctx, t, physdBin, "watch", "--fleet", "--nats", hubURL, "--creds", filepath.Join(keys, SubscriberCreds), "-n", "2")
		if err != nil {
			t.Logf("physd watch --fleet: %v\n%s", err, watchOut)
		}
		return err == nil
	}) || !strings.Contains(watchOut, "\nb1 ") && !strings.Contains(watchOut, "\nb2 ") {
		fail("physd watch --fleet with the subscriber's credentials: %v\n%s", err, watchOut)
	}
	t.Logf("physd watch --fleet --creds subscriber.creds:\n%s", strings.TrimSpace(watchOut))
	if !slices.Equal(connected(hub...), all) {
		fail("after the attacks, boards on the hub: %v, want %v", connected(hub...), all)
	}

	// Revoke b3: its connection closed, the next ones refused, no restart.
	out, err = runPhysd(ctx, t, physdBin, "fleet", "revoke", "--keys", keys, "--nats", hubURL, hostileName)
	if err != nil {
		fail("physd fleet revoke: %v\n%s", err, out)
	}
	t.Logf("physd fleet revoke: %s", strings.TrimSpace(out))
	revokedAt := time.Now()
	if !until(ctx, 20*time.Second, func() bool { return !slices.Contains(connected(hub...), hostileName) }) {
		fail("%s still connected 20 s after its revocation: %v", hostileName, connected(hub...))
	}
	gone := time.Since(revokedAt)
	// Its server retries every second: each is refused.
	time.Sleep(5 * time.Second)
	if slices.Contains(connected(hub...), hostileName) {
		fail("%s connected again after its revocation", hostileName)
	}
	var refusals int
	for _, line := range strings.Split(hostile.Log.String(), "\n") {
		if strings.Contains(strings.ToLower(line), "authorization violation") {
			refusals++
		}
	}
	if refusals == 0 {
		fail("the revoked board's server logged no refused connection:\n%s", tail(hostile.Log.String()))
	}
	t.Logf("REFUSED %-62s its leaf node connection closed %v after physd fleet revoke; %d reconnections refused (Authorization Violation) in 5 s",
		"revoked board "+hostileName+":", gone.Round(100*time.Millisecond), refusals)
	t.Logf("hostile board: %d attempts, every one refused", attempts)

	// Two of the three hub nodes down.
	before := aggregated()
	certified := func(b string) int { return len(boards[b].Log.Records("certified estimate")) }
	atDown := map[string]int{}
	for _, b := range honest {
		atDown[b] = certified(b)
	}
	for _, i := range []int{1, 2} {
		hub[i].proc.Kill()
	}
	t.Logf("killed %s and %s with %d messages in the aggregate; %v", hub[1].name, hub[2].name, before, *flagQuorumOutage)
	select {
	case <-ctx.Done():
		fail("out of time during the outage")
	case <-time.After(*flagQuorumOutage):
	}
	during := map[string]int{}
	for _, b := range honest {
		during[b] = certified(b) - atDown[b]
		if during[b] == 0 {
			fail("board %s certified nothing while two hub nodes were down", b)
		}
	}
	duringAgg := aggregated()
	for _, i := range []int{1, 2} {
		startHub(i)
	}
	back := time.Now()
	honestAll := slices.Clone(honest)
	if !until(ctx, 60*time.Second, func() bool { return slices.Equal(connected(hub...), honestAll) }) {
		fail("after the outage, boards connected to the hub: %v, want %v", connected(hub...), honestAll)
	}

	// Produced: every certified estimate each honest board logged (up to
	// now, and again after reading the aggregate, for the forged check).
	logged := func() (map[string]bool, map[string]int) {
		produced, perBoard := map[string]bool{}, map[string]int{}
		for _, b := range honest {
			for _, r := range boards[b].Log.Records("certified estimate") {
				s, err1 := time.Parse(time.RFC3339Nano, r.Str("window_start"))
				e, err2 := time.Parse(time.RFC3339Nano, r.Str("window_end"))
				if err1 != nil || err2 != nil {
					t.Fatalf("%s: certified estimate log line without its window: %v", b, r)
				}
				produced[estimateKey(b, r.Str("camera"), s, e)] = true
				perBoard[b]++
			}
		}
		return produced, perBoard
	}
	produced, perBoard := logged()
	var received map[string]int
	var forgedN, refusedN int
	read := func() bool {
		rctx, rcancel := context.WithTimeout(ctx, 30*time.Second)
		defer rcancel()
		msgs, err := physdtest.StreamMessages(rctx, op, DefaultStream, Subject("*", "physd.*.estimate"))
		if err != nil {
			t.Logf("reading the aggregate: %v", err)
			return false
		}
		received, refusedN = map[string]int{}, 0
		for _, m := range msgs {
			board, _, _ := ParseSubject(m.Subject())
			if err := CheckClaim(m.Subject(), m.Headers().Get(nats.MsgIdHdr), m.Data()); err != nil {
				refusedN++
				if board != hostileName {
					t.Errorf("a message of honest board %s refused: %v", board, err)
				}
				continue
			}
			if board == hostileName {
				continue
			}
			e, err := wire.DecodeEstimate(m.Data())
			if err != nil {
				t.Fatalf("aggregate %s: %v", m.Subject(), err)
			}
			received[estimateKey(e.Node, e.Camera, e.WindowStart, e.WindowEnd)]++
		}
		for k := range produced {
			if received[k] == 0 {
				return false
			}
		}
		return true
	}
	caughtUp := until(ctx, 2*time.Minute, read)
	catchUp := time.Since(back)
	// Forged: an honest board's estimate that the board never logged
	// (its log read again, now that the aggregate is read).
	everLogged, _ := logged()
	dups, lost, got := 0, 0, 0
	for k, n := range received {
		dups += n - 1
		if produced[k] {
			got++
		}
		if !everLogged[k] {
			forgedN++
		}
	}
	for k := range produced {
		if received[k] == 0 {
			lost++
		}
	}
	fmt.Printf("\n== fleet with accounts: hostile board %s refused %d times, then revoked; %s and %s down %v ==\n",
		hostileName, attempts, hub[1].name, hub[2].name, *flagQuorumOutage)
	fmt.Printf("certified estimates produced %d (%v; %v during the outage), received in %s %d, duplicates %d, lost %d, forged %d (and %d of %s's refused by their claim)\n",
		len(produced), perBoard, during, DefaultStream, got, dups, lost, forgedN, refusedN, hostileName)
	fmt.Printf("aggregate held %d when the two nodes went down, %d at the end of the outage, all %d %v after they were back; test took %v\n\n",
		before, duringAgg, got, catchUp.Round(time.Second), time.Since(start).Round(time.Second))
	if !caughtUp || lost > 0 || dups > 0 || forgedN > 0 || got != len(produced) {
		fail("produced %d, received %d, duplicates %d, lost %d, forged %d", len(produced), got, dups, lost, forgedN)
	}
	if refusedN < 2 {
		fail("the hostile board's two messages claiming b1 are not both in the aggregate to be refused (%d)", refusedN)
	}
}
