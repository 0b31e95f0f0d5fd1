package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/physd/physd/wire"
)

// A hub with accounts (docs/fleet.md, "Accounts"): NATS's decentralized
// JWT authentication, issued here with the nats-io/jwt and nkeys
// libraries (what nsc itself uses). The operator's keys live in a
// directory only the operator reads (the Issuer's); the hub's nodes know
// the operator's JWT and keep the accounts' JWTs in a full resolver, so an
// account JWT pushed to any node (a revocation) reaches every node without
// a restart.
//
// One account, FLEET, holds the aggregate stream, the operator and the
// subscribers; each board is a user of its own in it, whose permissions
// name the board: the board's leaf node connection may carry only its own
// JetStream domain's API ($JS.<domain>.API.>, inward), its sourcing
// consumer's deliveries (DeliverSubject(board), outward) and their
// replies. Everything else a board might send (any other board's API or
// delivery subjects, the hub's own JetStream API, the boards' and the
// aggregate's subjects) is refused by the hub.

// Names in an Issuer's directory.
const (
	// SysAccountName and FleetAccountName are the two accounts Init
	// creates: the system account (the resolver's updates) and the one
	// with the aggregate stream and every board.
	SysAccountName   = "SYS"
	FleetAccountName = "FLEET"
	// HubAccountsConf is the file Init writes for every hub node to
	// include: the operator's JWT, the system account, the accounts'
	// JWTs to preload.
	HubAccountsConf = "hub-accounts.conf"
	// OperatorCreds, SubscriberCreds and SysCreds are the credentials
	// Init issues: the fleet operator (every permission in FLEET), a
	// read-only subscriber, and the system user that pushes account
	// updates.
	OperatorCreds   = "operator.creds"
	SubscriberCreds = "subscriber.creds"
	SysCreds        = "sys.creds"
	// BoardsDir holds each board's credentials (<board>.creds) and the
	// public keys of every user issued to it (<board>.users).
	BoardsDir = "boards"
)

// DeliverPrefix is the prefix of the subject on which a board's sourcing
// consumer delivers to the aggregate stream: one per board, so that a
// board's credentials allow it to deliver as itself only.
func DeliverPrefix(board string) string { return "$PHYSD.FLEET." + board }

// Issuer holds the operator's keys and the FLEET account's current JWT
// (in Dir); it issues board and subscriber credentials and revokes them.
type Issuer struct {
	// Dir is the directory of the keys (mode 0700).
	Dir string

	operator, sys, fleet nkeys.KeyPair
}

// Init creates an Issuer in dir (which must not hold one yet): the
// operator, the system and FLEET accounts, the operator's, a subscriber's
// and the system user's credentials, and HubAccountsConf.
func Init(dir string) (*Issuer, error) {
	if _, err := os.Stat(filepath.Join(dir, "operator.nk")); err == nil {
		return nil, fmt.Errorf("fleet init: %s already holds an operator's keys", dir)
	}
	if err := os.MkdirAll(filepath.Join(dir, BoardsDir), 0o700); err != nil {
		return nil, fmt.Errorf("fleet init: %w", err)
	}
	is := &Issuer{Dir: dir}
	var err error
	if is.operator, err = nkeys.CreateOperator(); err != nil {
		return nil, fmt.Errorf("fleet init: %w", err)
	}
	if is.sys, err = nkeys.CreateAccount(); err != nil {
		return nil, fmt.Errorf("fleet init: %w", err)
	}
	if is.fleet, err = nkeys.CreateAccount(); err != nil {
		return nil, fmt.Errorf("fleet init: %w", err)
	}
	for name, kp := range map[string]nkeys.KeyPair{"operator.nk": is.operator, "SYS.nk": is.sys, "FLEET.nk": is.fleet} {
		seed, err := kp.Seed()
		if err != nil {
			return nil, fmt.Errorf("fleet init: %w", err)
		}
		if err := writeSecret(filepath.Join(dir, name), append(seed, '\n')); err != nil {
			return nil, fmt.Errorf("fleet init: %w", err)
		}
	}
	opub, _ := is.operator.PublicKey()
	sysPub, _ := is.sys.PublicKey()
	oc := jwt.NewOperatorClaims(opub)
	oc.Name = "physd-fleet"
	oc.SystemAccount = sysPub
	ojwt, err := oc.Encode(is.operator)
	if err != nil {
		return nil, fmt.Errorf("fleet init: operator: %w", err)
	}
	sc := jwt.NewAccountClaims(sysPub)
	sc.Name = SysAccountName
	sysJWT, err := sc.Encode(is.operator)
	if err != nil {
		return nil, fmt.Errorf("fleet init: system account: %w", err)
	}
	fleetPub, _ := is.fleet.PublicKey()
	fc := jwt.NewAccountClaims(fleetPub)
	fc.Name = FleetAccountName
	// JetStream for the aggregate stream (and subscribers' buckets).
	fc.Limits.JetStreamLimits.DiskStorage = jwt.NoLimit
	fc.Limits.JetStreamLimits.MemoryStorage = jwt.NoLimit
	fleetJWT, err := fc.Encode(is.operator)
	if err != nil {
		return nil, fmt.Errorf("fleet init: FLEET account: %w", err)
	}
	files := map[string]string{"operator.jwt": ojwt, "SYS.jwt": sysJWT, "FLEET.jwt": fleetJWT}
	for name, s := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s+"\n"), 0o600); err != nil {
			return nil, fmt.Errorf("fleet init: %w", err)
		}
	}
	conf := fmt.Sprintf(`# physd fleet hub accounts (docs/fleet.md): written by physd fleet init.
# Include it in every hub node's configuration, with a full resolver of
# the node's own, e.g.
#   include hub-accounts.conf
#   resolver { type: full, dir: "/var/lib/nats/jwt", allow_delete: false, interval: "2m" }
operator: %q
system_account: %s
# Replies to the hub's own JetStream API requests (a source's consumer
# creation) name the board's domain, $JSC.R.<domain>.…, so that each board's
# credentials allow it to answer its own only (nats-server 2.14+).
feature_flags: { js_api_reply_v2: true }
resolver_preload: {
  # %s
  %s: %q
  # %s: the aggregate stream, the operator, the subscribers and every board
  %s: %q
}
`, ojwt, sysPub, SysAccountName, sysPub, sysJWT, FleetAccountName, fleetPub, fleetJWT)
	if err := os.WriteFile(filepath.Join(dir, HubAccountsConf), []byte(conf), 0o644); err != nil {
		return nil, fmt.Errorf("fleet init: %w", err)
	}
	if _, err := is.issue(is.sys, "sys", &jwt.Permissions{}, SysCreds, jwt.ConnectionTypeStandard); err != nil {
		return nil, fmt.Errorf("fleet init: %w", err)
	}
	if _, err := is.issue(is.fleet, "operator", &jwt.Permissions{}, OperatorCreds, jwt.ConnectionTypeStandard); err != nil {
		return nil, fmt.Errorf("fleet init: %w", err)
	}
	if _, err := is.IssueSubscriber(DefaultStream, SubscriberCreds); err != nil {
		return nil, err
	}
	return is, nil
}

// LoadIssuer reads the operator's keys in dir (made by Init).
func LoadIssuer(dir string) (*Issuer, error) {
	is := &Issuer{Dir: dir}
	for _, f := range []struct {
		name string
		kp   *nkeys.KeyPair
	}{{"operator.nk", &is.operator}, {"SYS.nk", &is.sys}, {"FLEET.nk", &is.fleet}} {
		b, err := os.ReadFile(filepath.Join(dir, f.name))
		if err != nil {
			return nil, fmt.Errorf("fleet keys %s: %w (made by physd fleet init)", dir, err)
		}
		kp, err := nkeys.FromSeed([]byte(strings.TrimSpace(string(b))))
		if err != nil {
			// Not quoted: it is a secret.
			return nil, fmt.Errorf("fleet keys %s: %s: not an nkey seed", dir, f.name)
		}
		*f.kp = kp
	}
	return is, nil
}

// FleetAccount is the FLEET account's public key (the account the boards'
// and subscribers' credentials are in).
func (is *Issuer) FleetAccount() string {
	pub, _ := is.fleet.PublicKey()
	return pub
}

// BoardPermissions are a board's on its leaf node connection to the hub,
// seen from the board (the hub enforces them, and tells the board's
// server, which then sends nothing else): it may publish only its
// sourcing consumer's deliveries and JetStream API responses, and receive
// only requests for its own domain's JetStream API and the aggregate's
// flow control replies.
func BoardPermissions(board, domain string) jwt.Permissions {
	var p jwt.Permissions
	p.Pub.Allow.Add(
		DeliverPrefix(board)+".>",
		// Responses to the hub's JetStream API requests to the board's
		// domain: $JSC.R.<domain>.<account>.<stream>.<consumer>.<random>
		// with the hub's js_api_reply_v2 (HubAccountsConf sets it).
		"$JSC.R."+domain+".>",
	)
	p.Sub.Allow.Add(
		"$JS."+domain+".API.>",
		// Flow control replies to the sourcing consumer.
		"$JS.FC.>",
	)
	return p
}

// SubscriberPermissions are a read-only subscriber's on the hub (physd
// watch --fleet, physd alerts): read stream's messages through consumers
// of its own, keep physd alerts' bucket of handled alerts (create it, put
// and read its entries) and publish alerts' dead letters; no stream is
// deleted, purged or changed.
func SubscriberPermissions(stream string) jwt.Permissions {
	var p jwt.Permissions
	kv := "KV_" + wire.AlertsBucket
	p.Pub.Allow.Add(
		"$JS.API.INFO",
		"$JS.API.STREAM.NAMES",
		"$JS.API.STREAM.INFO."+stream,
		"$JS.API.CONSUMER.CREATE."+stream,
		"$JS.API.CONSUMER.CREATE."+stream+".>",
		"$JS.API.CONSUMER.DURABLE.CREATE."+stream+".>",
		"$JS.API.CONSUMER.INFO."+stream+".>",
		"$JS.API.CONSUMER.DELETE."+stream+".>",
		"$JS.API.CONSUMER.MSG.NEXT."+stream+".>",
		"$JS.ACK."+stream+".>",
		"$JS.FC."+stream+".>",
		"$JS.API.STREAM.INFO."+kv,
		"$JS.API.STREAM.CREATE."+kv,
		"$JS.API.STREAM.MSG.GET."+kv,
		"$JS.API.DIRECT.GET."+kv,
		"$JS.API.DIRECT.GET."+kv+".>",
		"$KV."+wire.AlertsBucket+".>",
		// physd alerts' dead letters (alertsub.DefaultDeadLetter).
		DefaultPrefix+".alerts.dead",
	)
	p.Sub.Allow.Add("_INBOX.>")
	return p
}

// IssueBoard issues credentials for board (whose JetStream domain is
// domain, its name if empty): a user of the FLEET account allowed only
// leaf node connections, with BoardPermissions. They are written to
// boards/<board>.creds in the Issuer's directory (0600), whose path it
// returns; the user's public key is added to boards/<board>.users, for
// Revoke. Issuing again makes a new user; the old one stays valid until
// revoked.
func (is *Issuer) IssueBoard(board, domain string) (string, error) {
	if domain == "" {
		domain = board
	}
	if !ValidName(board) || !ValidName(domain) {
		return "", fmt.Errorf("fleet: board %q, domain %q: want 1 to 64 of A-Z a-z 0-9 _ -", board, domain)
	}
	perms := BoardPermissions(board, domain)
	path := filepath.Join(BoardsDir, board+".creds")
	pub, err := is.issue(is.fleet, board, &perms, path, jwt.ConnectionTypeLeafnode)
	if err != nil {
		return "", fmt.Errorf("fleet: board %s: %w", board, err)
	}
	f, err := os.OpenFile(filepath.Join(is.Dir, BoardsDir, board+".users"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return "", fmt.Errorf("fleet: board %s: %w", board, err)
	}
	_, err = fmt.Fprintln(f, pub)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("fleet: board %s: %w", board, err)
	}
	return filepath.Join(is.Dir, path), nil
}

// BoardCreds is the path of the credentials last issued to board, and
// whether there are any.
func (is *Issuer) BoardCreds(board string) (string, bool) {
	path := filepath.Join(is.Dir, BoardsDir, board+".creds")
	_, err := os.Stat(path)
	return path, err == nil
}

// IssueSubscriber issues read-only credentials for the aggregate stream
// (SubscriberPermissions) to file (relative to the Issuer's directory,
// unless absolute) and returns the path.
func (is *Issuer) IssueSubscriber(stream, file string) (string, error) {
	perms := SubscriberPermissions(stream)
	if _, err := is.issue(is.fleet, "subscriber", &perms, file, jwt.ConnectionTypeStandard, jwt.ConnectionTypeWebsocket); err != nil {
		return "", fmt.Errorf("fleet: subscriber: %w", err)
	}
	if filepath.IsAbs(file) {
		return file, nil
	}
	return filepath.Join(is.Dir, file), nil
}

// issue makes a user of account with perms and writes its .creds file.
func (is *Issuer) issue(account nkeys.KeyPair, name string, perms *jwt.Permissions, file string, conns ...string) (string, error) {
	ukp, err := nkeys.CreateUser()
	if err != nil {
		return "", err
	}
	upub, _ := ukp.PublicKey()
	useed, err := ukp.Seed()
	if err != nil {
		return "", err
	}
	uc := jwt.NewUserClaims(upub)
	uc.Name = name
	uc.Permissions = *perms
	uc.AllowedConnectionTypes.Add(conns...)
	ujwt, err := uc.Encode(account)
	if err != nil {
		return "", err
	}
	creds, err := jwt.FormatUserConfig(ujwt, useed)
	if err != nil {
		return "", err
	}
	if !filepath.IsAbs(file) {
		file = filepath.Join(is.Dir, file)
	}
	return upub, writeSecret(file, creds)
}

// Revoke revokes every user issued to board (boards/<board>.users) in the
// FLEET account's JWT, which it signs anew, stores, and returns for
// Push. A board never issued is an error.
func (is *Issuer) Revoke(board string) (string, error) {
	b, err := os.ReadFile(filepath.Join(is.Dir, BoardsDir, board+".users"))
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("fleet revoke: board %q: no credentials were issued to it here", board)
	}
	if err != nil {
		return "", fmt.Errorf("fleet revoke: %w", err)
	}
	cur, err := os.ReadFile(filepath.Join(is.Dir, "FLEET.jwt"))
	if err != nil {
		return "", fmt.Errorf("fleet revoke: %w", err)
	}
	ac, err := jwt.DecodeAccountClaims(strings.TrimSpace(string(cur)))
	if err != nil {
		return "", fmt.Errorf("fleet revoke: FLEET.jwt: %w", err)
	}
	// Every JWT of the board's issued up to now (to the second, which
	// the revocation includes).
	at := time.Now()
	for _, pub := range strings.Fields(string(b)) {
		if !nkeys.IsValidPublicUserKey(pub) {
			return "", fmt.Errorf("fleet revoke: %s: %q is not a user's public key", board+".users", pub)
		}
		ac.RevokeAt(pub, at)
	}
	token, err := ac.Encode(is.operator)
	if err != nil {
		return "", fmt.Errorf("fleet revoke: %w", err)
	}
	if err := writeSecret(filepath.Join(is.Dir, "FLEET.jwt"), []byte(token+"\n")); err != nil {
		return "", fmt.Errorf("fleet revoke: %w", err)
	}
	return token, nil
}

// Push sends an account JWT to the hub's full resolver over nc (a
// connection with the system user's credentials): every running hub node
// takes it at once, and a node that was down fetches it from the others.
// It returns the answering server's message.
func Push(ctx context.Context, nc *nats.Conn, accountJWT string) (string, error) {
	ac, err := jwt.DecodeAccountClaims(accountJWT)
	if err != nil {
		return "", fmt.Errorf("fleet push: %w", err)
	}
	msg, err := nc.RequestWithContext(ctx, "$SYS.REQ.ACCOUNT."+ac.Subject+".CLAIMS.UPDATE", []byte(accountJWT))
	if err != nil {
		return "", fmt.Errorf("fleet push: account %s: %w", ac.Subject, err)
	}
	var resp struct {
		Server struct {
			Name string `json:"name"`
		} `json:"server"`
		Data *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"data"`
		Error *struct {
			Code        int    `json:"code"`
			Description string `json:"description"`
		} `json:"error"`
	}
	if err := json.Unmarshal(msg.Data, &resp); err != nil {
		return "", fmt.Errorf("fleet push: account %s: answer %q: %w", ac.Subject, msg.Data, err)
	}
	if resp.Error != nil {
		return "", fmt.Errorf("fleet push: account %s: %s refused it: %s (%d)", ac.Subject, resp.Server.Name, resp.Error.Description, resp.Error.Code)
	}
	if resp.Data == nil {
		return "", fmt.Errorf("fleet push: account %s: answer %q", ac.Subject, msg.Data)
	}
	return fmt.Sprintf("%s: %s", resp.Server.Name, resp.Data.Message), nil
}

// Revoked lists the users the FLEET account's stored JWT revokes.
func (is *Issuer) Revoked() ([]string, error) {
	cur, err := os.ReadFile(filepath.Join(is.Dir, "FLEET.jwt"))
	if err != nil {
		return nil, fmt.Errorf("fleet: %w", err)
	}
	ac, err := jwt.DecodeAccountClaims(strings.TrimSpace(string(cur)))
	if err != nil {
		return nil, fmt.Errorf("fleet: FLEET.jwt: %w", err)
	}
	var out []string
	for k := range ac.Revocations {
		out = append(out, k)
	}
	slices.Sort(out)
	return out, nil
}

// writeSecret writes b to path, 0600, through a temporary file.
func writeSecret(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// CheckClaim checks that an aggregate stream message on subject (of
// fleet.<board>.…, the board its credentials prove) claims no other
// board: its "node" field and its Nats-Msg-Id (msgID) must name the same
// board. A board can write anything into its own stream; what it claims
// there is taken only when the subject agrees.
func CheckClaim(subject, msgID string, data []byte) error {
	board, _, ok := ParseSubject(subject)
	if !ok {
		return fmt.Errorf("fleet: %s: not an aggregate subject", subject)
	}
	var m struct {
		Node string `json:"node"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("fleet: %s: %w", subject, err)
	}
	if m.Node != board {
		return fmt.Errorf("fleet: %s: message claims node %q, but came from board %s", subject, m.Node, board)
	}
	if msgID != "" && !strings.HasPrefix(msgID, board+".") {
		return fmt.Errorf("fleet: %s: Nats-Msg-Id %q is not board %s's", subject, msgID, board)
	}
	return nil
}
