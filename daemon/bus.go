package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"

	"github.com/physd/physd/config"
)

// bus is physd's NATS side: an embedded server when none is configured,
// one client connection with unlimited reconnects, and the JetStream
// stream for estimates and alerts.
type bus struct {
	log      *slog.Logger
	prefix   string
	embedded *server.Server
	nc       *nats.Conn
	js       jetstream.JetStream // nil when JetStream is disabled
	// PublishErrors counts messages that could not be handed to NATS.
	publishErrors atomic.Int64
}

// startBus starts the embedded server if no URLs are configured, connects,
// and creates or verifies the JetStream stream.
func startBus(ctx context.Context, cfg config.NATS, stateDir string, log *slog.Logger) (*bus, error) {
	b := &bus{log: log, prefix: cfg.SubjectPrefix}
	urls := cfg.URLs
	if len(urls) == 0 {
		ns, err := startEmbedded(cfg.Embedded, stateDir, log)
		if err != nil {
			return nil, err
		}
		b.embedded = ns
		urls = []string{ns.ClientURL()}
	}
	opts, err := clientOptions(cfg, log)
	if err != nil {
		b.close()
		return nil, err
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
			Subjects:    []string{Subject(b.prefix, "*", KindEstimate), Subject(b.prefix, "*", KindAlert)},
			MaxAge:      cfg.JetStream.MaxAge,
			Storage:     jetstream.FileStorage,
			Duplicates:  10 * time.Minute,
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
	return b, nil
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

func startEmbedded(cfg config.Embedded, stateDir string, log *slog.Logger) (*server.Server, error) {
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
		ServerName: "physd",
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
	if cfg.JetStream {
		if err := os.MkdirAll(opts.StoreDir, 0o750); err != nil {
			return nil, fmt.Errorf("nats: embedded store: %w", err)
		}
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
	log.Info("embedded nats-server started", "url", ns.ClientURL(), "jetstream", cfg.JetStream, "store", opts.StoreDir)
	return ns, nil
}

func clientOptions(cfg config.NATS, log *slog.Logger) ([]nats.Option, error) {
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
		}),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			log.Warn("nats error", "err", err)
		}),
	}
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
		kp, err := nkeys.FromSeed([]byte(seed))
		if err != nil {
			return nil, fmt.Errorf("nats: nkey_seed: not a valid seed")
		}
		pub, err := kp.PublicKey()
		if err != nil {
			return nil, fmt.Errorf("nats: nkey_seed: %w", err)
		}
		opts = append(opts, nats.Nkey(pub, kp.Sign))
	}
	if tok := cfg.Token.Value(); tok != "" {
		opts = append(opts, nats.Token(tok))
	}
	return opts, nil
}

// publish sends v as JSON on physd.<camera>.<kind> with a Nats-Msg-Id.
// Estimates and alerts go through JetStream (acknowledged, deduplicated)
// when it is enabled.
func (b *bus) publish(ctx context.Context, camera, kind, id string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		b.publishErrors.Add(1)
		return fmt.Errorf("nats: encode %s: %w", kind, err)
	}
	msg := nats.NewMsg(Subject(b.prefix, camera, kind))
	msg.Data = data
	msg.Header.Set(nats.MsgIdHdr, id)
	if b.js != nil && (kind == KindEstimate || kind == KindAlert) {
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
