package daemon

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"

	"github.com/physd/physd/wire"
)

// The embedded server's credentials, in the state directory: nkey seeds,
// one line each, mode 0600, created at the first start.
const (
	// ServiceSeedFile is physd's own user: the only one that may publish
	// on the subject prefix and manage the JetStream stream.
	ServiceSeedFile = "nats/physd.nk"
	// SubscriberSeedFile is the read-only user of local subscribers
	// (physd watch, physd alerts, nats sub --nkey): it reads physd's
	// subjects and consumes the stream, and publishes nothing of physd's.
	SubscriberSeedFile = "nats/subscriber.nk"
)

// embeddedCreds are the embedded server's two users.
type embeddedCreds struct {
	service, subscriber nkeys.KeyPair
	// servicePub and subscriberPub are their public keys.
	servicePub, subscriberPub string
}

// SubscriberSeed is the path of the subscriber's nkey seed in stateDir.
func SubscriberSeed(stateDir string) string {
	return filepath.Join(stateDir, filepath.FromSlash(SubscriberSeedFile))
}

// loadOrCreateCreds reads the two seeds in stateDir, creating those that
// are missing. A seed file readable by others is made 0600 again (and
// said so): a subscriber's seed lets anyone on the board read every
// estimate, physd's lets them forge alerts.
func loadOrCreateCreds(stateDir string, log *slog.Logger) (*embeddedCreds, error) {
	dir := filepath.Join(stateDir, "nats")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("nats: credentials: %w", err)
	}
	var c embeddedCreds
	for _, f := range []struct {
		name string
		kp   *nkeys.KeyPair
	}{{ServiceSeedFile, &c.service}, {SubscriberSeedFile, &c.subscriber}} {
		path := filepath.Join(stateDir, filepath.FromSlash(f.name))
		kp, err := readSeed(path, log)
		if errors.Is(err, fs.ErrNotExist) {
			kp, err = createSeed(path)
			if err == nil {
				log.Info("nats: created credentials", "file", path)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("nats: credentials %s: %w", path, err)
		}
		*f.kp = kp
	}
	var err error
	if c.servicePub, err = c.service.PublicKey(); err != nil {
		return nil, fmt.Errorf("nats: credentials: %w", err)
	}
	if c.subscriberPub, err = c.subscriber.PublicKey(); err != nil {
		return nil, fmt.Errorf("nats: credentials: %w", err)
	}
	return &c, nil
}

func readSeed(path string, log *slog.Logger) (nkeys.KeyPair, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(path, 0o600); err != nil {
			return nil, err
		}
		log.Warn("nats: credentials were readable by others; made 0600", "file", path, "was", st.Mode().Perm().String())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	kp, err := nkeys.ParseDecoratedNKey(b)
	if err != nil {
		// Not quoted: it is a secret, or what is left of one.
		return nil, fmt.Errorf("not an nkey seed (remove it and restart to create new credentials)")
	}
	return kp, nil
}

// createSeed writes a new user seed to path, 0600, through a temporary
// file so that a crash leaves no half-written seed.
func createSeed(path string) (nkeys.KeyPair, error) {
	kp, err := nkeys.CreateUser()
	if err != nil {
		return nil, err
	}
	seed, err := kp.Seed()
	if err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".seed-*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return nil, err
	}
	if _, err := tmp.Write(append(seed, '\n')); err != nil {
		tmp.Close()
		return nil, err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return nil, err
	}
	if err := tmp.Close(); err != nil {
		return nil, err
	}
	return kp, os.Rename(tmp.Name(), path)
}

// users are the embedded server's users: physd with every permission on
// its own server, and the subscriber, who may
//   - subscribe to physd's subjects (prefix.>) and replies (_INBOX.>);
//   - read the stream and consume from it (stream info, consumers, acks);
//   - keep physd alerts' key-value bucket (wire.AlertsBucket: the alerts it
//     handled), and nothing else of JetStream: no stream is deleted,
//     purged or changed, no message deleted, no other stream created;
//   - publish nothing on prefix.> but physd alerts' dead letters;
//   - publish the covariates' subjects (alerts.covariates[].subject,
//     sensors): a sensor on the board feeds the alerts' charts with the
//     subscriber's key, and nothing else.
func (c *embeddedCreds) users(prefix string, sensors ...string) []*server.NkeyUser {
	pub := []string{
		"$JS.API.INFO",
		"$JS.API.STREAM.INFO.*",
		"$JS.API.STREAM.NAMES",
		"$JS.API.STREAM.LIST",
		"$JS.API.CONSUMER.>",
		"$JS.ACK.>",
		"$JS.FC.>",
		// physd alerts' bucket (its stream is KV_<bucket>; subject
		// wildcards match whole tokens, so it is named).
		"$JS.API.STREAM.CREATE.KV_" + wire.AlertsBucket,
		"$JS.API.STREAM.MSG.GET.KV_" + wire.AlertsBucket,
		"$JS.API.DIRECT.GET.KV_" + wire.AlertsBucket,
		"$JS.API.DIRECT.GET.KV_" + wire.AlertsBucket + ".>",
		"$KV." + wire.AlertsBucket + ".>",
		// physd alerts' dead letters (alertsub.DefaultDeadLetter under
		// this prefix): no camera's subject and no stream's.
		prefix + ".alerts.dead",
	}
	for _, s := range sensors {
		if s != "" {
			pub = append(pub, s)
		}
	}
	return []*server.NkeyUser{
		{Nkey: c.servicePub},
		{Nkey: c.subscriberPub, Permissions: &server.Permissions{
			Publish:   &server.SubjectPermission{Allow: pub},
			Subscribe: &server.SubjectPermission{Allow: []string{prefix + ".>", "_INBOX.>"}},
		}},
	}
}
