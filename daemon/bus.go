package daemon

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"

	"github.com/physd/physd/config"
	"github.com/physd/physd/daemon/outbox"
	"github.com/physd/physd/wire"
)

// bus is physd's NATS side: an embedded server when none is configured,
// one client connection with unlimited reconnects, and the JetStream
// stream for estimates and alerts.
type bus struct {
	log    *slog.Logger
	prefix string
	// node is the board's name (config.Node.EffectiveName): in every
	// message's "node" field and Nats-Msg-Id, so that a hub's aggregate
	// stream, which deduplicates on the id, never confuses two boards'
	// cameras of the same name.
	node     string
	embedded *server.Server
	nc       *nats.Conn
	js       jetstream.JetStream // nil when JetStream is disabled
	// PublishErrors counts messages that could not be handed to NATS.
	publishErrors atomic.Int64
	// out holds estimates, alerts and diagnostics while NATS is away;
	// kick wakes the drainer, which stops with stop.
	out      *outbox.Outbox
	kick     chan struct{}
	stop     chan struct{}
	drained  chan struct{}
	draining bool // the drainer runs
}

// startBus starts the embedded server if no URLs are configured, connects,
// and creates or verifies the JetStream stream. node is the board's name.
func startBus(ctx context.Context, cfg config.NATS, node, stateDir string, log *slog.Logger, sensors ...string) (*bus, error) {
	b := &bus{log: log, prefix: cfg.SubjectPrefix, node: node, kick: make(chan struct{}, 1), stop: make(chan struct{}), drained: make(chan struct{})}
	ob, err := outbox.Open(filepath.Join(stateDir, "outbox"), outbox.Options{Logger: log})
	if err != nil {
		return nil, fmt.Errorf("nats: outbox: %w", err)
	}
	b.out = ob
	if n := ob.Len(); n > 0 {
		log.Info("outbox holds messages from before the restart; publishing them first", "messages", n)
	}
	urls := cfg.URLs
	opts := clientOptions(cfg, log, b.wake)
	if len(urls) == 0 {
		creds, err := loadOrCreateCreds(stateDir, log)
		if err != nil {
			b.close()
			return nil, err
		}
		ns, err := startEmbedded(cfg.Embedded, node, cfg.SubjectPrefix, stateDir, creds, log, sensors...)
		if err != nil {
			b.close()
			return nil, err
		}
		b.embedded = ns
		urls = []string{ns.ClientURL()}
		// physd's own connection is in process: it needs no listener,
		// and no TLS when the listener has it.
		opts = append(opts, nats.InProcessServer(ns), nats.Nkey(creds.servicePub, creds.service.Sign))
	} else {
		auth, err := externalAuth(cfg)
		if err != nil {
			b.close()
			return nil, err
		}
		opts = append(opts, auth...)
	}
	nc, err := nats.Connect(joinURLs(urls), opts...)
	if err != nil {
		b.close()
		return nil, fmt.Errorf("nats: connect to %v: %w", urls, err)
	}
	b.nc = nc
	if cfg.JetStream.Enabled && (b.embedded == nil || cfg.Embedded.JetStream) {
		js, err := jetstream.New(nc)
		if err != nil {
			b.close()
			return nil, fmt.Errorf("nats: jetstream: %w", err)
		}
		sc := jetstream.StreamConfig{
			Name:        cfg.JetStream.Stream,
			Description: "physd certified estimates and alerts",
			// Cameras' and zones' (physd.<camera>.<zone>.<kind>).
			Subjects:   wire.StreamSubjects(b.prefix),
			MaxAge:     cfg.JetStream.MaxAge,
			Storage:    jetstream.FileStorage,
			Duplicates: 10 * time.Minute,
		}
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		_, err = js.CreateOrUpdateStream(sctx, sc)
		cancel()
		if err != nil {
			b.close()
			return nil, fmt.Errorf("nats: jetstream stream %s: %w", sc.Name, err)
		}
		b.js = js
		log.Info("jetstream stream ready", "stream", sc.Name, "subjects", sc.Subjects)
	}
	b.draining = true
	go b.drain()
	b.wake()
	return b, nil
}

// nkeyOption authenticates with an nkey seed. The error never quotes the
// seed.
func nkeyOption(seed string) (nats.Option, error) {
	kp, err := nkeys.FromSeed([]byte(seed))
	if err != nil {
		return nil, fmt.Errorf("nats: nkey_seed: not a valid seed")
	}
	pub, err := kp.PublicKey()
	if err != nil {
		return nil, fmt.Errorf("nats: nkey_seed: %w", err)
	}
	return nats.Nkey(pub, kp.Sign), nil
}

func joinURLs(urls []string) string {
	s := ""
	for i, u := range urls {
		if i > 0 {
			s += ","
		}
		s += u
	}
	return s
}

// startEmbedded starts the embedded nats-server, named after the node (a
// hub cluster refuses two servers of the same name), in the node's
// JetStream domain, and joined to a hub as a leaf node when
// cfg.LeafNodes lists the hub's URLs; prefix is the subject prefix.
func startEmbedded(cfg config.Embedded, node, prefix, stateDir string, creds *embeddedCreds, log *slog.Logger, sensors ...string) (*server.Server, error) {
	host, portStr, err := net.SplitHostPort(cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("nats: embedded listen %q: %w", cfg.Listen, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 0 || port > 65535 {
		return nil, fmt.Errorf("nats: embedded listen %q: bad port", cfg.Listen)
	}
	if port == 0 {
		port = server.RANDOM_PORT
	}
	opts := &server.Options{
		ServerName: node,
		Host:       host,
		Port:       port,
		NoSigs:     true,
		NoLog:      true,
		JetStream:  cfg.JetStream,
		StoreDir:   filepath.Join(stateDir, "jetstream"),
		// Bounded so a months-long run on a small board cannot fill its disk.
		JetStreamMaxStore:  1 << 30,
		JetStreamMaxMemory: 64 << 20,
	}
	// Every client authenticates: physd, or the read-only subscriber
	// (who may publish the sensors' covariate subjects).
	opts.Nkeys = creds.users(prefix, sensors...)
	if t := cfg.TLS; t.CertFile != "" {
		tc, err := server.GenTLSConfig(&server.TLSConfigOpts{CertFile: t.CertFile, KeyFile: t.KeyFile, CaFile: t.CAFile, Verify: t.CAFile != ""})
		if err != nil {
			return nil, fmt.Errorf("nats: embedded.tls: %w", err)
		}
		opts.TLSConfig, opts.TLS, opts.TLSVerify = tc, true, t.CAFile != ""
	}
	if m := cfg.MQTT; m.Listen != "" {
		pw, err := loadOrCreateMQTTPassword(stateDir)
		if err != nil {
			return nil, fmt.Errorf("nats: %w", err)
		}
		if err := mqttOptions(opts, m.Listen, prefix, m.DiscoveryPrefix, pw); err != nil {
			return nil, err
		}
	}
	if cfg.JetStream {
		// The domain keeps the board's JetStream its own behind a hub
		// with JetStream: clients here use $JS.API, the hub reaches it as
		// $JS.<domain>.API.
		opts.JetStreamDomain = cfg.EffectiveDomain(node)
		if err := os.MkdirAll(opts.StoreDir, 0o750); err != nil {
			return nil, fmt.Errorf("nats: embedded store: %w", err)
		}
	}
	if len(cfg.LeafNodes.URLs) > 0 {
		remote, err := leafRemote(cfg.LeafNodes, prefix)
		if err != nil {
			return nil, err
		}
		opts.LeafNode.Remotes = []*server.RemoteLeafOpts{remote}
		// The hub may be away for long: keep trying, every few seconds.
		opts.LeafNode.ReconnectInterval = 2 * time.Second
	}
	ns, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("nats: embedded server: %w", err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		ns.Shutdown()
		return nil, fmt.Errorf("nats: embedded server on %s did not start (port in use?)", cfg.Listen)
	}
	log.Info("embedded nats-server started", "url", ns.ClientURL(), "name", opts.ServerName, "jetstream", cfg.JetStream,
		"domain", opts.JetStreamDomain, "store", opts.StoreDir, "leafnode_urls", len(cfg.LeafNodes.URLs), "mqtt", mqttAddr(ns))
	return ns, nil
}

// mqttAddr is the embedded server's MQTT listener (host:port; "" none).
func mqttAddr(ns *server.Server) string {
	if ns == nil {
		return ""
	}
	v, err := ns.Varz(nil)
	if err != nil || v.MQTT.Port <= 0 {
		return ""
	}
	return net.JoinHostPort(v.MQTT.Host, strconv.Itoa(v.MQTT.Port))
}

// leafRemote is the embedded server's leaf node connection to the hub: every
// hub URL (the server moves to the next when one fails; the hub cluster
// also gossips its other nodes' URLs), TLS when a URL says tls:// or files
// are given, and the credentials file.
//
// The board's subjects (<prefix>.>) cross the leaf node connection in
// neither direction: the hub gets the board's messages only by sourcing
// its stream (across the domain's API, on the sourcing consumer's own
// subjects), which copies each once. Other boards' messages coming in
// would be stored by this board's stream, whose subjects are every
// camera's; this board's going out could be stored a second time by a
// hub stream that captures <prefix>.>. (nats-server 2.15 applies a
// remote's deny_imports to what the leaf sends as well; the explicit
// deny_exports says so whatever the version.)
func leafRemote(l config.LeafNodes, prefix string) (*server.RemoteLeafOpts, error) {
	r := &server.RemoteLeafOpts{Credentials: l.CredentialsFile, DenyImports: []string{prefix + ".>"}, DenyExports: []string{prefix + ".>"}}
	for i, s := range l.URLs {
		if !strings.Contains(s, "://") {
			s = "nats-leaf://" + s
		}
		u, err := url.Parse(s)
		if err != nil {
			// Not quoted: the URL may hold a password.
			return nil, fmt.Errorf("nats: embedded.leafnodes.urls[%d]: does not parse", i)
		}
		if u.Scheme == "tls" {
			r.TLS = true
		}
		r.URLs = append(r.URLs, u)
	}
	if l.TLS != (config.TLS{}) {
		r.TLS = true
	}
	if r.TLS {
		tc := &tls.Config{MinVersion: tls.VersionTLS12}
		if l.TLS.CAFile != "" {
			pem, err := os.ReadFile(l.TLS.CAFile)
			if err != nil {
				return nil, fmt.Errorf("nats: embedded.leafnodes.tls.ca_file: %w", err)
			}
			tc.RootCAs = x509.NewCertPool()
			if !tc.RootCAs.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("nats: embedded.leafnodes.tls.ca_file %s: no PEM certificate", l.TLS.CAFile)
			}
		}
		if l.TLS.CertFile != "" {
			cert, err := tls.LoadX509KeyPair(l.TLS.CertFile, l.TLS.KeyFile)
			if err != nil {
				return nil, fmt.Errorf("nats: embedded.leafnodes.tls.cert_file: %w", err)
			}
			tc.Certificates = []tls.Certificate{cert}
		}
		r.TLSConfig = tc
	}
	return r, nil
}

// clientOptions builds the connection's options but its credentials;
// reconnected is called when the connection comes back, to drain the
// outbox.
func clientOptions(cfg config.NATS, log *slog.Logger, reconnected func()) []nats.Option {
	opts := []nats.Option{
		nats.Name("physd"),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(cfg.ReconnectWait),
		nats.RetryOnFailedConnect(true),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			log.Warn("nats disconnected", "err", err)
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			log.Info("nats reconnected", "url", nc.ConnectedUrlRedacted())
			reconnected()
		}),
		nats.ConnectHandler(func(*nats.Conn) { reconnected() }),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			log.Warn("nats error", "err", err)
		}),
	}
	return opts
}

// externalAuth is TLS and the credentials for the servers in cfg.URLs.
func externalAuth(cfg config.NATS) ([]nats.Option, error) {
	var opts []nats.Option
	if cfg.TLS.CAFile != "" {
		opts = append(opts, nats.RootCAs(cfg.TLS.CAFile))
	}
	if cfg.TLS.CertFile != "" || cfg.TLS.KeyFile != "" {
		opts = append(opts, nats.ClientCert(cfg.TLS.CertFile, cfg.TLS.KeyFile))
	}
	if cfg.CredentialsFile != "" {
		opts = append(opts, nats.UserCredentials(cfg.CredentialsFile))
	}
	if seed := cfg.NKeySeed.Value(); seed != "" {
		o, err := nkeyOption(seed)
		if err != nil {
			return nil, err
		}
		opts = append(opts, o)
	}
	if tok := cfg.Token.Value(); tok != "" {
		opts = append(opts, nats.Token(tok))
	}
	return opts, nil
}

// publish sends m as JSON on <prefix>.<camera>[.<zone>].<kind> with its
// id as Nats-Msg-Id. Persisted kinds (estimates and alerts) go through
// JetStream (acknowledged, deduplicated) when it is enabled. Messages
// that cannot be published now — NATS is away, or older ones still wait —
// go to the outbox, in order, and are published when NATS returns; a
// queued message is not an error. Live kinds (status heartbeats) are only
// sent now.
func (b *bus) publish(ctx context.Context, m wire.Message) error {
	kind, id := m.Kind(), m.ID()
	data, err := json.Marshal(m)
	if err != nil {
		b.publishErrors.Add(1)
		return fmt.Errorf("nats: encode %s: %w", kind, err)
	}
	msg := nats.NewMsg(wire.SubjectOf(b.prefix, m))
	msg.Data = data
	msg.Header.Set(nats.MsgIdHdr, id)
	if kind.Live() || b.out == nil {
		return b.send(ctx, msg, kind.Persisted())
	}
	if b.out.Len() == 0 && b.nc.IsConnected() {
		err := b.send(ctx, msg, kind.Persisted())
		if err == nil {
			return nil
		}
		b.log.Warn("publish failed; queued in the outbox", "subject", msg.Subject, "err", err)
	}
	class := outbox.Diagnostic
	if kind.Persisted() {
		class = outbox.Essential
	}
	evicted, err := b.out.Append(outbox.Message{Subject: msg.Subject, MsgID: id, Class: class, Data: data})
	if err != nil {
		b.publishErrors.Add(1)
		return fmt.Errorf("nats: outbox: %w", err)
	}
	for _, e := range evicted {
		b.log.Warn("outbox full: message dropped", "subject", e.Subject, "msg_id", e.MsgID, "class", e.Class.String())
	}
	b.wake()
	return nil
}

// send publishes one message now: through JetStream (waiting for the
// acknowledgement) for a persisted kind's when it is enabled, else on
// core NATS.
func (b *bus) send(ctx context.Context, msg *nats.Msg, persisted bool) error {
	if b.js != nil && persisted {
		// Detached from cancellation: a window finished during shutdown is
		// still published, within the timeout.
		pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if _, err := b.js.PublishMsg(pctx, msg); err != nil {
			b.publishErrors.Add(1)
			return fmt.Errorf("nats: publish %s: %w", msg.Subject, err)
		}
		return nil
	}
	if err := b.nc.PublishMsg(msg); err != nil {
		b.publishErrors.Add(1)
		return fmt.Errorf("nats: publish %s: %w", msg.Subject, err)
	}
	return nil
}

// persisted reports subjects the JetStream stream holds, for the outbox's
// messages, which keep only their subject: a persisted kind's under the
// bus's prefix. One under another prefix (queued before the prefix was
// changed) is no subject of the stream and goes on core NATS.
func (b *bus) persisted(subject string) bool {
	_, _, kind, err := wire.ParseSubject(b.prefix, subject)
	return err == nil && kind.Persisted()
}

// wake asks the drainer to try the outbox.
func (b *bus) wake() {
	select {
	case b.kick <- struct{}{}:
	default:
	}
}

// drain publishes the outbox in order whenever NATS is connected: on a
// kick (a new message, a reconnect) and every few seconds. A message
// leaves the outbox only once JetStream acknowledged it, or, for core
// NATS, once the server answered a flush after it.
func (b *bus) drain() {
	defer close(b.drained)
	t := time.NewTicker(2 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-b.kick:
		case <-t.C:
		}
		for b.nc.IsConnected() {
			m, ok, err := b.out.Front()
			if err != nil {
				b.log.Warn("outbox read failed; will retry", "err", err)
				break
			}
			if !ok {
				break
			}
			msg := nats.NewMsg(m.Subject)
			msg.Data = m.Data
			msg.Header.Set(nats.MsgIdHdr, m.MsgID)
			persisted := b.persisted(m.Subject)
			err = b.send(context.Background(), msg, persisted)
			if err == nil && (b.js == nil || !persisted) {
				err = b.nc.FlushTimeout(5 * time.Second)
			}
			if err != nil {
				b.log.Debug("outbox drain paused", "err", err)
				break
			}
			if err := b.out.Remove(m.Seq); err != nil && !errors.Is(err, outbox.ErrNotQueued) {
				b.log.Warn("outbox remove failed", "err", err)
			}
		}
	}
}

// clientURL is where subscribers reach the server physd uses.
func (b *bus) clientURL() string {
	if b.embedded != nil {
		return b.embedded.ClientURL()
	}
	return b.nc.ConnectedUrlRedacted()
}

// close flushes pending messages and closes the connection and the
// embedded server.
func (b *bus) close() {
	if b.out != nil {
		select {
		case <-b.stop:
		default:
			close(b.stop)
		}
		if b.draining {
			<-b.drained
		}
		if err := b.out.Close(); err != nil {
			b.log.Warn("outbox close", "err", err)
		}
	}
	if b.nc != nil {
		if err := b.nc.FlushTimeout(5 * time.Second); err != nil && !errors.Is(err, nats.ErrConnectionClosed) {
			b.log.Warn("nats flush at shutdown", "err", err)
		}
		b.nc.Close()
	}
	if b.embedded != nil {
		b.embedded.Shutdown()
		b.embedded.WaitForShutdown()
	}
}
