//go:build !nocv

package fleet

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/physd/physd/internal/physdtest"
	"github.com/physd/physd/wire"
)

var flagOutage = flag.Duration("fleet.outage", 60*time.Second, "how long the whole hub cluster stays stopped")

// hubNode is one nats-server of the hub cluster: its ports, its config
// file and, while it runs, its process.
type hubNode struct {
	name                           string
	client, cluster, leaf, monitor int
	conf                           string
	proc                           *physdtest.Process
}

// leafNames are the boards connected to the hub nodes as leaf nodes,
// sorted (a node that does not answer adds none).
func leafNames(ctx context.Context, nodes ...hubNode) []string {
	var all []string
	for _, h := range nodes {
		names, _ := leafz(ctx, h)
		all = append(all, names...)
	}
	slices.Sort(all)
	return all
}

// startHubCluster writes three hub nodes' configurations under dir (with
// more appended to each, given its store directory; nil: nothing) and
// starts them from natsBin; startHub starts node i again after a kill.
func startHubCluster(ctx context.Context, t *testing.T, dir, natsBin string, more func(store string) string) (hub []hubNode, startHub func(i int)) {
	t.Helper()
	hub = make([]hubNode, 3)
	for i := range hub {
		hub[i] = hubNode{name: fmt.Sprintf("hub-%d", i+1), client: physdtest.FreePort(t), cluster: physdtest.FreePort(t),
			leaf: physdtest.FreePort(t), monitor: physdtest.FreePort(t)}
	}
	for i := range hub {
		hub[i].conf = filepath.Join(dir, hub[i].name+".conf")
		store := filepath.Join(dir, hub[i].name)
		conf := hubConf(hub[i], hub, store)
		if more != nil {
			conf += more(store)
		}
		if err := os.WriteFile(hub[i].conf, []byte(conf), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	startHub = func(i int) {
		t.Helper()
		hub[i].proc = physdtest.Start(t, hub[i].name, natsBin, []string{"-c", hub[i].conf})
		wctx, wcancel := context.WithTimeout(ctx, 20*time.Second)
		defer wcancel()
		if err := physdtest.WaitListening(wctx, "127.0.0.1:"+strconv.Itoa(hub[i].client)); err != nil {
			t.Fatalf("%s: %v\n%s", hub[i].name, err, hub[i].proc.Log.String())
		}
	}
	for i := range hub {
		startHub(i)
	}
	return hub, startHub
}

// hubConf is a hub node's configuration: docs/hub/hub-N.conf on loopback
// ports, without TLS or accounts.
func hubConf(n hubNode, all []hubNode, store string) string {
	var routes []string
	for _, o := range all {
		if o.name != n.name {
			routes = append(routes, fmt.Sprintf("nats-route://127.0.0.1:%d", o.cluster))
		}
	}
	return fmt.Sprintf(`server_name: %s
listen: 127.0.0.1:%d
http: 127.0.0.1:%d
jetstream {
  store_dir: %q
  domain: hub
}
cluster {
  name: hub
  listen: 127.0.0.1:%d
  routes: [%s]
}
leafnodes {
  listen: 127.0.0.1:%d
}
`, n.name, n.client, n.monitor, store, n.cluster, strings.Join(routes, ", "), n.leaf)
}

// boardConf is a board's physd configuration: a named node whose
// embedded server is a leaf node of every hub node (with the credentials
// file creds, unless empty), one synthetic
// pendulum camera named "pend" on every board (the same camera name on
// each, as the ids must cope with).
func boardConf(name string, port int, hub []hubNode, seed int, creds string) string {
	var urls []string
	for _, h := range hub {
		urls = append(urls, fmt.Sprintf("%q", fmt.Sprintf("nats-leaf://127.0.0.1:%d", h.leaf)))
	}
	leaf := "urls: [" + strings.Join(urls, ", ") + "]"
	if creds != "" {
		leaf += fmt.Sprintf(", credentials_file: %q", creds)
	}
	return fmt.Sprintf(`node: {name: %s}
log: {level: info, format: json}
http: {listen: ""}
nats:
  embedded:
    listen: "127.0.0.1:%d"
    jetstream: true
    leafnodes: {%s}
  reconnect_wait: 250ms
windows: {hop: 2s}
cameras:
  - {name: pend, source: {kind: synthetic, synthetic: {seed: %d}}}
`, name, port, leaf, seed)
}

// leafz returns the names of the leaf nodes connected to a hub node ("" and
// an error when it does not answer).
func leafz(ctx context.Context, n hubNode) ([]string, error) {
	rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/leafz", n.monitor), nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var lz struct {
		Leafs []struct {
			Name string `json:"name"`
		} `json:"leafs"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&lz); err != nil {
		return nil, fmt.Errorf("%s /leafz: %w", n.name, err)
	}
	var names []string
	for _, l := range lz.Leafs {
		names = append(names, l.Name)
	}
	slices.Sort(names)
	return names, nil
}

// until polls cond every 250 ms until it holds or ctx ends; it returns
// whether it held.
func until(ctx context.Context, limit time.Duration, cond func() bool) bool {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	for !cond() {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(250 * time.Millisecond):
		}
	}
	return true
}

// estimateKey identifies a certified estimate fleet-wide.
func estimateKey(node, camera string, start, end time.Time) string {
	return fmt.Sprintf("%s|%s|%d|%d", node, camera, start.UnixNano(), end.UnixNano())
}

// TestFleetOutage runs a fleet of real processes on loopback: a 3-node
// hub cluster with JetStream and three physd boards, each with its
// embedded server as a leaf node of the hub in its own JetStream domain,
// and the hub's aggregate stream set up by `physd fleet add`. The whole
// hub is stopped for -fleet.outage (60 s) and started again, then one hub
// node is killed for good. Every certified estimate of every board must be
// in the aggregate stream exactly once, and a board whose leaf node
// connection was on the killed node must move to another.
func TestFleetOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("fleet: real processes and a 60 s outage; not in -short")
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute+*flagOutage)
	defer cancel()
	dir := t.TempDir()
	physdBin := physdtest.Build(t, dir, "github.com/physd/physd/cmd/physd")
	natsBin := physdtest.Build(t, dir, "github.com/nats-io/nats-server/v2")

	hub, startHub := startHubCluster(ctx, t, dir, natsBin, nil)
	var hubURLs []string
	for _, h := range hub {
		hubURLs = append(hubURLs, fmt.Sprintf("nats://127.0.0.1:%d", h.client))
	}

	boardNames := []string{"b1", "b2", "b3"}
	boards := map[string]*physdtest.Process{}
	for i, b := range boardNames {
		conf := filepath.Join(dir, b+".yaml")
		if err := os.WriteFile(conf, []byte(boardConf(b, physdtest.FreePort(t), hub, i+1, "")), 0o600); err != nil {
			t.Fatal(err)
		}
		boards[b] = physdtest.Start(t, b, physdBin, []string{"run", "--quiet", "--config", conf, "--state-dir", filepath.Join(dir, b+"-state")})
	}
	fail := func(format string, args ...any) {
		t.Helper()
		for _, b := range boardNames {
			t.Logf("%s log (tail):\n%s", b, tail(boards[b].Log.String()))
		}
		for _, h := range hub {
			if h.proc != nil {
				t.Logf("%s log (tail):\n%s", h.name, tail(h.proc.Log.String()))
			}
		}
		t.Fatalf(format, args...)
	}
	connected := func(nodes ...hubNode) []string { return leafNames(ctx, nodes...) }
	if !until(ctx, 30*time.Second, func() bool { return slices.Equal(connected(hub...), boardNames) }) {
		fail("boards connected to the hub: %v, want %v", connected(hub...), boardNames)
	}
	for _, b := range boardNames {
		wctx, wcancel := context.WithTimeout(ctx, 2*time.Minute)
		_, ok := boards[b].Log.Wait(wctx, "certified estimate", func(physdtest.Record) bool { return true })
		wcancel()
		if !ok {
			fail("board %s never certified", b)
		}
	}

	// The aggregate stream, R3, by the command an operator runs.
	add := physdtest.Start(t, "physd fleet add", physdBin, append([]string{"fleet", "add", "--nats", strings.Join(hubURLs, ","), "--replicas", "3"}, boardNames...))
	if !until(ctx, 40*time.Second, add.Exited) {
		fail("physd fleet add did not finish")
	}
	if err := add.Stop(time.Second); err != nil {
		fail("physd fleet add: %v\n%s", err, add.Log.String())
	}
	t.Logf("physd fleet add: %s", strings.TrimSpace(add.Log.String()))

	nc, err := nats.Connect(strings.Join(hubURLs, ","), nats.MaxReconnects(-1), nats.ReconnectWait(250*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	aggregated := func() uint64 {
		sctx, scancel := context.WithTimeout(ctx, 2*time.Second)
		defer scancel()
		s, err := js.Stream(sctx, DefaultStream)
		if err != nil {
			return 0
		}
		return s.CachedInfo().State.Msgs
	}
	if !until(ctx, 30*time.Second, func() bool { return aggregated() >= 3 }) {
		fail("the aggregate stream holds %d messages after 30 s", aggregated())
	}

	// physd watch on the hub: every board's cameras.
	watch := physdtest.Start(t, "physd watch", physdBin, []string{"watch", "--fleet", "--nats", strings.Join(hubURLs, ","), "-n", "12"})
	if !until(ctx, 60*time.Second, watch.Exited) {
		fail("physd watch --fleet printed %q in 60 s, not 12 estimates", watch.Log.String())
	}
	for _, b := range boardNames {
		if !strings.Contains(watch.Log.String(), "\n"+b+" ") {
			fail("physd watch --fleet on the hub did not show board %s:\n%s", b, watch.Log.String())
		}
	}
	t.Logf("physd watch --fleet on the hub:\n%s", watch.Log.String())

	// The whole hub stopped, then started again.
	before := aggregated()
	for _, h := range hub {
		if err := h.proc.Stop(10 * time.Second); err != nil {
			t.Logf("%s: %v", h.name, err)
		}
	}
	t.Logf("hub stopped with %d messages in the aggregate; %v outage", before, *flagOutage)
	select {
	case <-ctx.Done():
		fail("out of time during the outage")
	case <-time.After(*flagOutage):
	}
	for i := range hub {
		startHub(i)
	}
	if !until(ctx, 60*time.Second, func() bool { return slices.Equal(connected(hub...), boardNames) }) {
		fail("after the outage, boards connected to the hub: %v, want %v", connected(hub...), boardNames)
	}
	if !until(ctx, 60*time.Second, func() bool { return aggregated() > before }) {
		fail("the aggregate stream did not grow after the outage (%d messages)", aggregated())
	}

	// One hub node with a board on it killed for good.
	victim := -1
	var moved []string
	for i, h := range hub {
		if names, _ := leafz(ctx, h); len(names) > 0 {
			victim, moved = i, names
			break
		}
	}
	if victim < 0 {
		fail("no hub node has a board")
	}
	hub[victim].proc.Kill()
	killed := time.Now()
	rest := slices.Delete(slices.Clone(hub), victim, victim+1)
	t.Logf("killed %s for good; its boards %v", hub[victim].name, moved)
	if !until(ctx, 60*time.Second, func() bool { return slices.Equal(connected(rest...), boardNames) }) {
		fail("after %s was killed, boards on the others: %v, want %v", hub[victim].name, connected(rest...), boardNames)
	}
	movedTo := map[string]string{}
	for _, h := range rest {
		names, _ := leafz(ctx, h)
		for _, n := range names {
			if slices.Contains(moved, n) {
				movedTo[n] = h.name
			}
		}
	}
	// A few more windows on the surviving nodes.
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
	}

	// Produced: every certified estimate each board logged until now.
	produced := map[string]bool{}
	perBoard := map[string]int{}
	for _, b := range boardNames {
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
	// Received: the aggregate stream, once it has caught up with them.
	var received map[string]int
	var ids []string
	read := func() bool {
		rctx, rcancel := context.WithTimeout(ctx, 30*time.Second)
		defer rcancel()
		msgs, err := physdtest.StreamMessages(rctx, nc, DefaultStream, Subject("*", "physd.*.estimate"))
		if err != nil {
			t.Logf("reading the aggregate: %v", err)
			return false
		}
		received, ids = map[string]int{}, ids[:0]
		for _, m := range msgs {
			e, err := wire.DecodeEstimate(m.Data())
			if err != nil {
				t.Fatalf("aggregate %s: %v", m.Subject(), err)
			}
			if m.Subject() != Subject(e.Node, wire.Subject("physd", e.Key(), e.Kind())) {
				t.Errorf("estimate of board %s on %s", e.Node, m.Subject())
			}
			id := m.Headers().Get(nats.MsgIdHdr)
			if id != e.ID() {
				t.Errorf("estimate of %s/%s: Nats-Msg-Id %q is not its window's", e.Node, e.Camera, id)
			}
			received[estimateKey(e.Node, e.Camera, e.WindowStart, e.WindowEnd)]++
			ids = append(ids, id)
		}
		for k := range produced {
			if received[k] == 0 {
				return false
			}
		}
		return true
	}
	caughtUp := until(ctx, 2*time.Minute, read)
	catchUp := time.Since(killed)
	dups, lost, got := 0, 0, 0
	for k, n := range received {
		dups += n - 1
		if produced[k] {
			got++
		}
	}
	for k := range produced {
		if received[k] == 0 {
			lost++
		}
	}
	fmt.Printf("\n== fleet: 3-node hub stopped %v and restarted, %s killed for good; 3 boards ==\n", *flagOutage, hub[victim].name)
	fmt.Printf("certified estimates produced %d (%v), received in %s %d, duplicates %d, lost %d\n",
		len(produced), perBoard, DefaultStream, got, dups, lost)
	fmt.Printf("boards on %s moved to %v; aggregate held %d before the outage, all %d %v after the kill; test took %v\n\n",
		hub[victim].name, movedTo, before, got, catchUp.Round(time.Second), time.Since(start).Round(time.Second))
	if !caughtUp || lost > 0 || dups > 0 || got != len(produced) {
		fail("produced %d, received %d, duplicates %d, lost %d", len(produced), got, dups, lost)
	}
	if len(movedTo) != len(moved) {
		fail("boards %v were on %s; moved: %v", moved, hub[victim].name, movedTo)
	}
	for _, b := range boardNames {
		if perBoard[b] == 0 {
			t.Errorf("board %s produced nothing", b)
		}
	}
}

// tail is the last 40 lines of s.
func tail(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > 40 {
		lines = lines[len(lines)-40:]
	}
	return strings.Join(lines, "\n")
}
