package fleet

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/conf"
)

// TestIssuer: Init's files and their modes, a board's credentials (leaf
// node only, its own domain's subjects), and a revocation of every user
// issued to a board, kept across LoadIssuer.
func TestIssuer(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "keys")
	is, err := Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Init(dir); err == nil {
		t.Error("Init over existing keys: no error")
	}
	for _, f := range []string{"operator.nk", "SYS.nk", "FLEET.nk", OperatorCreds, SubscriberCreds, SysCreds} {
		st, err := os.Stat(filepath.Join(dir, f))
		if err != nil {
			t.Errorf("%s: %v", f, err)
		} else if st.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v; want 0600", f, st.Mode().Perm())
		}
	}
	m, err := conf.ParseFile(filepath.Join(dir, HubAccountsConf))
	if err != nil {
		t.Fatalf("%s: %v", HubAccountsConf, err)
	}
	pre, _ := m["resolver_preload"].(map[string]any)
	if _, ok := pre[is.FleetAccount()]; !ok || len(pre) != 2 || m["system_account"] == nil || m["operator"] == nil {
		t.Errorf("%s: %v", HubAccountsConf, m)
	}

	path, err := is.IssueBoard("b1", "site1")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	token, err := jwt.ParseDecoratedJWT(b)
	if err != nil {
		t.Fatal(err)
	}
	uc, err := jwt.DecodeUserClaims(token)
	if err != nil {
		t.Fatal(err)
	}
	if uc.Name != "b1" || uc.Issuer != is.FleetAccount() || !slices.Equal(uc.AllowedConnectionTypes, jwt.StringList{jwt.ConnectionTypeLeafnode}) {
		t.Errorf("b1's user: name %q, issuer %s, connection types %v", uc.Name, uc.Issuer, uc.AllowedConnectionTypes)
	}
	if !slices.Contains(uc.Sub.Allow, "$JS.site1.API.>") || !slices.Contains(uc.Pub.Allow, "$JSC.R.site1.>") ||
		!slices.Contains(uc.Pub.Allow, DeliverPrefix("b1")+".>") || len(uc.Pub.Allow) != 2 || len(uc.Sub.Allow) != 2 {
		t.Errorf("b1's permissions: pub %v, sub %v", uc.Pub.Allow, uc.Sub.Allow)
	}
	if _, err := is.IssueBoard("b1", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := is.IssueBoard("b.1", ""); err == nil {
		t.Error("board b.1: no error")
	}

	token2, err := is.Revoke("b1")
	if err != nil {
		t.Fatal(err)
	}
	ac, err := jwt.DecodeAccountClaims(token2)
	if err != nil {
		t.Fatal(err)
	}
	if ac.Subject != is.FleetAccount() || !ac.IsClaimRevoked(uc) || len(ac.Revocations) != 2 {
		t.Errorf("after revoking b1: %d revocations, b1's first user revoked %v", len(ac.Revocations), ac.IsClaimRevoked(uc))
	}
	if _, err := is.Revoke("b2"); err == nil || !strings.Contains(err.Error(), "no credentials") {
		t.Errorf("revoking a board never issued: %v", err)
	}
	again, err := LoadIssuer(dir)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := again.Revoked(); err != nil || len(r) != 2 {
		t.Errorf("revocations after LoadIssuer: %v, %v", r, err)
	}
}

// TestCheckClaim: a message is taken as its subject's board's only when
// its node and its id say the same board.
func TestCheckClaim(t *testing.T) {
	for _, tc := range []struct {
		subject, id, data string
		ok                bool
	}{
		{"fleet.b1.physd.pend.estimate", "b1.pend.estimate.1.2", `{"node":"b1"}`, true},
		{"fleet.b1.physd.pend.estimate", "", `{"node":"b1"}`, true},
		{"fleet.b3.physd.pend.estimate", "b1.pend.estimate.1.2", `{"node":"b1"}`, false},
		{"fleet.b3.physd.pend.estimate", "b1.pend.estimate.1.2", `{"node":"b3"}`, false},
		{"fleet.b3.physd.pend.estimate", "b3.pend.estimate.1.2", `{"node":"b1"}`, false},
		{"fleet.b3.physd.pend.estimate", "b3.pend.estimate.1.2", `{}`, false},
		{"fleet.b3.physd.pend.estimate", "b3.x", `not json`, false},
		{"physd.pend.estimate", "b3.x", `{"node":"b3"}`, false},
	} {
		if err := CheckClaim(tc.subject, tc.id, []byte(tc.data)); (err == nil) != tc.ok {
			t.Errorf("%s, id %q, %s: %v, want ok %v", tc.subject, tc.id, tc.data, err, tc.ok)
		}
	}
}
