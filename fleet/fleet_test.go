package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/physd/physd/alertsub"
	"github.com/physd/physd/internal/physdtest"
	"github.com/physd/physd/wire"
)

// hubAndBoards starts an in-process hub (JetStream domain hub, a leaf node
// listener) and one leaf server per board, each in its own domain with
// physd's stream and, as physd's embedded server has, physd.> denied
// both ways on the leaf node connection, and returns JetStream contexts
// on the hub and on each board.
func hubAndBoards(t *testing.T, boards ...string) (jetstream.JetStream, map[string]jetstream.JetStream) {
	t.Helper()
	dir := t.TempDir()
	leafPort := physdtest.FreePort(t)
	hub := physdtest.StartNATS(t, &server.Options{ServerName: "hub", Host: "127.0.0.1", Port: server.RANDOM_PORT, NoSigs: true,
		JetStream: true, JetStreamDomain: "hub", StoreDir: filepath.Join(dir, "hub"),
		LeafNode: server.LeafNodeOpts{Host: "127.0.0.1", Port: leafPort}})
	leafURL, err := url.Parse(fmt.Sprintf("nats-leaf://127.0.0.1:%d", leafPort))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]jetstream.JetStream{}
	for _, b := range boards {
		ns := physdtest.StartNATS(t, &server.Options{ServerName: b, Host: "127.0.0.1", Port: server.RANDOM_PORT, NoSigs: true,
			JetStream: true, JetStreamDomain: b, StoreDir: filepath.Join(dir, b),
			LeafNode: server.LeafNodeOpts{Remotes: []*server.RemoteLeafOpts{{URLs: []*url.URL{leafURL}, DenyImports: []string{"physd.>"}, DenyExports: []string{"physd.>"}}}, ReconnectInterval: 100 * time.Millisecond}})
		js := connect(t, ns.ClientURL())
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: DefaultBoardStream,
			Subjects: []string{"physd.*.estimate", "physd.*.alert", "physd.*.*.estimate", "physd.*.*.alert"}})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		out[b] = js
	}
	deadline := time.Now().Add(10 * time.Second)
	for hub.NumLeafNodes() < len(boards) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d boards connected to the hub", hub.NumLeafNodes(), len(boards))
		}
		time.Sleep(20 * time.Millisecond)
	}
	return connect(t, hub.ClientURL()), out
}

func connect(t *testing.T, u string) jetstream.JetStream {
	t.Helper()
	nc, err := nats.Connect(u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// publish stores n estimates of camera cam on a board, with the ids
// physd gives them.
func publish(t *testing.T, js jetstream.JetStream, board, cam string, n int) {
	t.Helper()
	for i := range n {
		end := time.Date(2026, 1, 1, 0, 0, i, 0, time.UTC)
		e := &wire.Estimate{Node: board, Camera: cam, WindowStart: end.Add(-time.Second), WindowEnd: end}
		msg := nats.NewMsg(wire.Subject("physd", e.Key(), e.Kind()))
		msg.Data = []byte(`{}`)
		msg.Header.Set(nats.MsgIdHdr, e.ID())
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := js.PublishMsg(ctx, msg)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestAddSourcesEveryBoard: two boards, each with a camera named "cam"
// and the same windows, end up in the aggregate stream once each, under
// fleet.<board>.physd.cam.estimate; ls lists them; rm removes one.
func TestAddSourcesEveryBoard(t *testing.T) {
	hubJS, boards := hubAndBoards(t, "b1", "b2")
	publish(t, boards["b1"], "b1", "cam", 5)
	publish(t, boards["b2"], "b2", "cam", 5)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h := New(hubJS, Options{})
	if err := h.Add(ctx, Board{Name: "b1"}); err != nil {
		t.Fatal(err)
	}
	if err := h.Add(ctx, Board{Name: "b2"}, Board{Name: "b1"}); err != nil { // b1 again: replaced, not doubled
		t.Fatal(err)
	}
	publish(t, boards["b2"], "b2", "cam", 7) // 2 more, 5 re-published: deduplicated on the board
	s, err := hubJS.Stream(ctx, DefaultStream)
	if err != nil {
		t.Fatal(err)
	}
	for {
		info, err := s.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if info.State.Msgs >= 12 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("aggregate stream holds %d messages, want 12", info.State.Msgs)
		case <-time.After(50 * time.Millisecond):
		}
	}
	time.Sleep(300 * time.Millisecond) // nothing more may arrive
	for board, want := range map[string]uint64{"b1": 5, "b2": 7} {
		info, err := s.Info(ctx, jetstream.WithSubjectFilter(Subject(board, "physd.>")))
		if err != nil {
			t.Fatal(err)
		}
		if got := info.State.Subjects[Subject(board, "physd.cam.estimate")]; got != want {
			t.Errorf("board %s: %d messages on %s, want %d (subjects %v)", board, got, Subject(board, "physd.cam.estimate"), want, info.State.Subjects)
		}
	}
	list, state, err := h.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if state.Msgs != 12 || len(list) != 2 || list[0].Name != "b1" || list[1].Name != "b2" || list[0].Domain != "b1" || list[1].Stream != DefaultBoardStream {
		t.Errorf("ls: %d messages, boards %+v", state.Msgs, list)
	}
	if err := h.Remove(ctx, "b1"); err != nil {
		t.Fatal(err)
	}
	if list, _, err = h.List(ctx); err != nil || len(list) != 1 || list[0].Name != "b2" {
		t.Errorf("after rm b1: %+v, %v", list, err)
	}
	if err := h.Remove(ctx, "nope"); err == nil {
		t.Error("rm of an unknown board: no error")
	}
}

// TestAddRefusesCapturingStream: an aggregate stream with subjects would
// also capture the leaf nodes' core messages; Add refuses to use it.
func TestAddRefusesCapturingStream(t *testing.T) {
	hubJS, _ := hubAndBoards(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := hubJS.CreateStream(ctx, jetstream.StreamConfig{Name: "AGG", Subjects: []string{"physd.>"}}); err != nil {
		t.Fatal(err)
	}
	if err := New(hubJS, Options{Stream: "AGG"}).Add(ctx, Board{Name: "b1"}); err == nil {
		t.Error("Add to a stream with subjects: no error")
	}
	if err := New(hubJS, Options{}).Add(ctx, Board{Name: "b.1"}); err == nil {
		t.Error("Add of board b.1: no error")
	}
}

// TestBoardOfSource: Source and boardOf are inverses.
func TestBoardOfSource(t *testing.T) {
	b, err := Board{Name: "b1", Domain: "d1", Stream: "S", Prefix: "site.physd"}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	src := Source(b)
	got, ok := boardOf(&src)
	if !ok || got != b {
		t.Errorf("boardOf(Source(%+v)) = %+v, %v", b, got, ok)
	}
}

// recorder is an alertsub.Action that keeps what it was handed.
type recorder struct {
	mu  sync.Mutex
	got []alertsub.Delivery
}

func (r *recorder) Run(_ context.Context, d alertsub.Delivery) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, d)
	return nil
}

func (r *recorder) String() string { return "recorder" }

func (r *recorder) deliveries() []alertsub.Delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

// TestAlertsFromEveryBoard: `physd alerts` pointed at the hub's aggregate
// stream (package alertsub, --stream PHYSD_FLEET, filters under fleet.*)
// hands over each board's alert, two boards' alerts of a camera of the same
// name and window both, each once.
func TestAlertsFromEveryBoard(t *testing.T) {
	hubJS, boards := hubAndBoards(t, "b1", "b2")
	end := time.Date(2026, 1, 1, 0, 0, 10, 0, time.UTC)
	for b, js := range boards {
		a := &wire.Alert{Schema: wire.SchemaAlert, Node: b, Camera: "cam", Time: end, State: wire.AlertRaised, Reasons: []string{"drift"},
			WindowStart: end.Add(-5 * time.Second), WindowEnd: end}
		data, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		msg := nats.NewMsg(wire.Subject("physd", a.Key(), a.Kind()))
		msg.Data = data
		msg.Header.Set(nats.MsgIdHdr, a.ID())
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err = js.PublishMsg(ctx, msg)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := New(hubJS, Options{}).Add(ctx, Board{Name: "b1"}, Board{Name: "b2"}); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	sub, err := alertsub.New(ctx, hubJS.Conn(), alertsub.Config{Stream: DefaultStream, Action: rec,
		Filters: []string{Subject("*", "physd.*.alert"), Subject("*", "physd.*.*.alert")}})
	if err != nil {
		t.Fatal(err)
	}
	rctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- sub.Run(rctx) }()
	for len(rec.deliveries()) < 2 && ctx.Err() == nil {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // nothing more may come
	stop()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	var subjects []string
	for _, d := range rec.deliveries() {
		subjects = append(subjects, d.Subject)
	}
	slices.Sort(subjects)
	want := []string{Subject("b1", "physd.cam.alert"), Subject("b2", "physd.cam.alert")}
	if !slices.Equal(subjects, want) {
		t.Errorf("alerts handed over on %v, want %v, once each", subjects, want)
	}
}

// TestParseSubject: ParseSubject undoes Subject, and refuses what Subject
// cannot make.
func TestParseSubject(t *testing.T) {
	board, subj, ok := ParseSubject(Subject("b1", "physd.bridge.left.alert"))
	if !ok || board != "b1" || subj != "physd.bridge.left.alert" {
		t.Errorf("ParseSubject: %q %q %v", board, subj, ok)
	}
	for _, s := range []string{"physd.bridge.alert", "fleet.b1", "fleet.b1.", "fleet.*.physd.x.alert", "fleetx.b1.physd.x.alert"} {
		if b, rest, ok := ParseSubject(s); ok {
			t.Errorf("ParseSubject(%s) = %q %q, want false", s, b, rest)
		}
	}
}

// TestAddTurnsDeduplicationOff: an aggregate made with a duplicate window
// (as an earlier version did) has none after Add, and a new one has none
// from the start, so that no board's claimed Nats-Msg-Id can make the hub
// drop another board's message: board b3 stores estimates with b1's ids
// (the same windows), and the aggregate keeps b1's all the same, under
// fleet.b1, and b3's under fleet.b3. The earlier version's source of b1
// (without a deliver prefix) resumes where it was: b1's estimates once.
func TestAddTurnsDeduplicationOff(t *testing.T) {
	hubJS, boards := hubAndBoards(t, "b1", "b3")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const n = 5
	publish(t, boards["b3"], "b1", "cam", n) // b3 claims b1's ids, first
	publish(t, boards["b1"], "b1", "cam", n)
	// OLD: b1 sourced as an earlier version did (no deliver prefix, a
	// duplicate window), its n estimates copied before the upgrade; Add
	// must resume it, not copy them again.
	old := Source(Board{Name: "b1", Domain: "b1", Stream: DefaultBoardStream, Prefix: DefaultPrefix})
	old.External.DeliverPrefix = ""
	if _, err := hubJS.CreateStream(ctx, jetstream.StreamConfig{Name: "OLD", Duplicates: 10 * time.Minute,
		Sources: []*jetstream.StreamSource{&old}}); err != nil {
		t.Fatal(err)
	}
	for {
		s, err := hubJS.Stream(ctx, "OLD")
		if err != nil {
			t.Fatalf("OLD: %v", err)
		}
		if s.CachedInfo().State.Msgs == n {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, name := range []string{"OLD", "NEW"} {
		if err := New(hubJS, Options{Stream: name}).Add(ctx, Board{Name: "b1"}, Board{Name: "b3"}); err != nil {
			t.Fatal(err)
		}
		s, err := hubJS.Stream(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if d := s.CachedInfo().Config.Duplicates; d != 0 {
			t.Errorf("%s: duplicate window %v after Add, want 0", name, d)
		}
		for !t.Failed() {
			info, err := s.Info(ctx)
			if err != nil {
				// info is nil with an error: the last count is the cached one.
				t.Fatalf("%s: %v (%d messages when last read)", name, err, s.CachedInfo().State.Msgs)
			}
			if info.State.Msgs >= 2*n {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		time.Sleep(200 * time.Millisecond) // time for a copy too many
		msgs, err := physdtest.StreamMessages(ctx, hubJS.Conn(), name, Subject("b1", ">"))
		if err != nil || len(msgs) != n {
			t.Errorf("%s: b1's estimates: %d, %v; want %d", name, len(msgs), err, n)
		}
		if all, err := physdtest.StreamMessages(ctx, hubJS.Conn(), name, ">"); err != nil || len(all) != 2*n {
			t.Errorf("%s: %d messages, %v; want %d", name, len(all), err, 2*n)
		}
	}
}
