package daemon

import (
	"context"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/physd/physd/config"
	"github.com/physd/physd/internal/physdtest"
	"github.com/physd/physd/wire"
)

// TestLeafRemote: hub URLs without a scheme are leaf node URLs, tls://
// turns TLS on, the boards' subjects cross in neither direction, and a
// missing CA file is an error naming its key.
func TestLeafRemote(t *testing.T) {
	r, err := leafRemote(config.LeafNodes{URLs: []string{"hub-1:7422", "nats-leaf://hub-2:7422"}}, "site.physd")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.URLs) != 2 || r.URLs[0].String() != "nats-leaf://hub-1:7422" || r.TLS || len(r.DenyImports) != 1 || r.DenyImports[0] != "site.physd.>" || len(r.DenyExports) != 1 || r.DenyExports[0] != "site.physd.>" {
		t.Errorf("remote %+v", r)
	}
	if r, err := leafRemote(config.LeafNodes{URLs: []string{"tls://hub-1:7422"}}, "physd"); err != nil || !r.TLS || r.TLSConfig == nil {
		t.Errorf("tls:// URL: TLS %v, config %v, err %v", r != nil && r.TLS, r != nil && r.TLSConfig != nil, err)
	}
	_, err = leafRemote(config.LeafNodes{URLs: []string{"hub:7422"}, TLS: config.TLS{CAFile: filepath.Join(t.TempDir(), "none.pem")}}, "physd")
	if err == nil || !strings.Contains(err.Error(), "leafnodes.tls.ca_file") {
		t.Errorf("missing CA file: %v", err)
	}
}

// TestEmbeddedLeafNode starts the bus with its embedded server a leaf node
// of an in-process hub: the leaf is named after the node and in its
// domain, the hub reaches the board's stream through $JS.<node>.API, and
// the board's subjects cross the leaf node connection in neither
// direction (the hub gets them only by sourcing).
func TestEmbeddedLeafNode(t *testing.T) {
	dir := t.TempDir()
	leafPort := physdtest.FreePort(t)
	hub := physdtest.StartNATS(t, &server.Options{ServerName: "hub-1", Host: "127.0.0.1", Port: server.RANDOM_PORT, NoSigs: true, NoLog: true,
		JetStream: true, JetStreamDomain: "hub", StoreDir: filepath.Join(dir, "hub"),
		LeafNode: server.LeafNodeOpts{Host: "127.0.0.1", Port: leafPort}})
	cfg := config.Default().NATS
	cfg.Embedded.Listen = "127.0.0.1:0"
	cfg.Embedded.LeafNodes.URLs = []string{"127.0.0.1:" + strconv.Itoa(leafPort)}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := startBus(ctx, cfg, "b1", filepath.Join(dir, "board"), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer b.close()
	for hub.NumLeafNodes() < 1 {
		select {
		case <-ctx.Done():
			t.Fatal("the board never joined the hub")
		case <-time.After(20 * time.Millisecond):
		}
	}
	lz, err := hub.Leafz(nil)
	if err != nil || len(lz.Leafs) != 1 || lz.Leafs[0].Name != "b1" {
		t.Fatalf("hub /leafz: %+v, %v", lz, err)
	}
	nc, err := nats.Connect(hub.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	sub, err := nc.SubscribeSync("physd.>")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // the hub's interest, if it crossed, reaches the board
	end := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	e := &wire.Estimate{Schema: wire.SchemaEstimate, Node: b.node, Camera: "cam", WindowStart: end.Add(-time.Second), WindowEnd: end}
	if id := e.ID(); id != "b1.cam.estimate."+strconv.FormatInt(end.Add(-time.Second).UnixNano(), 10)+"."+strconv.FormatInt(end.UnixNano(), 10) {
		t.Errorf("id: %q", id)
	}
	if err := b.publish(ctx, e); err != nil {
		t.Fatal(err)
	}
	if err := nc.Publish("physd.other.estimate", []byte(`{}`)); err != nil { // another board's, passing through the hub
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	if m, err := sub.NextMsg(500 * time.Millisecond); err == nil && m.Subject != "physd.other.estimate" {
		t.Errorf("the board's %s crossed to the hub", m.Subject)
	}
	// The board's stream: its own estimate only, reached from the hub
	// through the board's domain.
	hjs, err := jetstream.NewWithDomain(nc, "b1")
	if err != nil {
		t.Fatal(err)
	}
	s, err := hjs.Stream(ctx, cfg.JetStream.Stream)
	if err != nil {
		t.Fatalf("the board's stream from the hub, domain b1: %v", err)
	}
	if n := s.CachedInfo().State.Msgs; n != 1 {
		t.Errorf("the board's stream holds %d messages, want 1 (its own estimate)", n)
	}
}
