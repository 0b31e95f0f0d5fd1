package fleet

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/physd/physd/internal/physdtest"
)

func TestScratchAccounts(t *testing.T) {
	dir := t.TempDir()
	keys := filepath.Join(dir, "keys")
	is, err := Init(keys)
	if err != nil {
		t.Fatal(err)
	}
	credsPath, err := is.IssueBoard("b1", "")
	if err != nil {
		t.Fatal(err)
	}
	acc, _ := os.ReadFile(filepath.Join(keys, HubAccountsConf))
	os.WriteFile(filepath.Join(dir, HubAccountsConf), acc, 0o600)
	lport := physdtest.FreePort(t)
	conf := fmt.Sprintf(`server_name: hub
listen: 127.0.0.1:-1
jetstream { store_dir: %q, domain: hub }
leafnodes { listen: 127.0.0.1:%d }
include hub-accounts.conf
resolver { type: full, dir: %q }
`, filepath.Join(dir, "hubjs"), lport, filepath.Join(dir, "jwt"))
	cf := filepath.Join(dir, "hub.conf")
	os.WriteFile(cf, []byte(conf), 0o600)
	hopts, err := server.ProcessConfigFile(cf)
	if err != nil {
		t.Fatal(err)
	}
	hopts.NoSigs = true
	hopts.Debug, hopts.Trace = true, os.Getenv("TRACE") != ""
	hub, err := server.NewServer(hopts)
	if err != nil {
		t.Fatal(err)
	}
	hub.ConfigureLogger()
	go hub.Start()
	defer hub.Shutdown()
	if !hub.ReadyForConnections(10 * time.Second) {
		t.Fatal("hub")
	}
	u, _ := url.Parse(fmt.Sprintf("nats-leaf://127.0.0.1:%d", lport))
	bopts := &server.Options{ServerName: "b1", Host: "127.0.0.1", Port: -1, JetStream: true, JetStreamDomain: "b1", StoreDir: filepath.Join(dir, "b1js"), NoSigs: true}
	bopts.LeafNode.Remotes = []*server.RemoteLeafOpts{{URLs: []*url.URL{u}, Credentials: credsPath, DenyImports: []string{"physd.>"}, DenyExports: []string{"physd.>"}}}
	board, err := server.NewServer(bopts)
	if err != nil {
		t.Fatal(err)
	}
	go board.Start()
	defer board.Shutdown()
	if !board.ReadyForConnections(10 * time.Second) {
		t.Fatal("board")
	}
	bnc, err := nats.Connect(board.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	bjs, _ := jetstream.New(bnc)
	ctx := context.Background()
	if _, err := bjs.CreateStream(ctx, jetstream.StreamConfig{Name: "PHYSD_ESTIMATES", Subjects: []string{"physd.>"}}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		bjs.Publish(ctx, "physd.pend.estimate", []byte(`{"node":"b1"}`))
	}
	time.Sleep(time.Second)
	op, err := nats.Connect(hub.ClientURL(), nats.UserCredentials(filepath.Join(keys, OperatorCreds)))
	if err != nil {
		t.Fatal(err)
	}
	ojs, _ := jetstream.New(op)
	h := New(ojs, Options{})
	if err := h.Add(ctx, Board{Name: "b1"}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Second)
	l, st, err := h.List(ctx)
	t.Logf("list %+v state %+v err %v", l, st, err)
}
