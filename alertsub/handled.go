package alertsub

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// handled records which alert ids a durable consumer's action took, in a
// JetStream key-value bucket shared by every subscriber (one key per
// durable and id), so that a record outlives the subscriber's process and
// host and is seen by every replica of the same durable.
type handled struct {
	kv      jetstream.KeyValue
	durable string
}

// openHandled opens the bucket, or creates it if there is none (which
// needs more permissions than opening one an operator created).
func openHandled(ctx context.Context, js jetstream.JetStream, bucket, durable string, ttl time.Duration) (*handled, error) {
	kv, err := js.KeyValue(ctx, bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		kv, err = js.CreateKeyValue(ctx, jetstream.KeyValueConfig{
			Bucket:      bucket,
			Description: "physd alerts: ids whose action succeeded, per durable consumer",
			History:     1,
			TTL:         ttl,
			Storage:     jetstream.FileStorage,
		})
		if errors.Is(err, jetstream.ErrBucketExists) {
			kv, err = js.KeyValue(ctx, bucket)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("key-value bucket %s: %w", bucket, err)
	}
	return &handled{kv: kv, durable: durable}, nil
}

// validKey is what a key-value key may hold.
var validKey = regexp.MustCompile(`^[-/_=.a-zA-Z0-9]+$`)

// key is the id's key: durable.id, or durable.sha256.<hex> when the id has
// characters a key cannot hold.
func (h *handled) key(id string) string {
	if validKey.MatchString(id) && id[0] != '.' && id[len(id)-1] != '.' {
		return h.durable + "." + id
	}
	sum := sha256.Sum256([]byte(id))
	return h.durable + ".sha256." + hex.EncodeToString(sum[:])
}

// record is what the bucket keeps about a handled alert.
type record struct {
	Subject   string    `json:"subject"`
	StreamSeq uint64    `json:"stream_seq"`
	Attempt   int       `json:"attempt"`
	Handled   time.Time `json:"handled"`
}

// done reports whether id's action already succeeded.
func (h *handled) done(ctx context.Context, id string) (bool, error) {
	_, err := h.kv.Get(ctx, h.key(id))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, jetstream.ErrKeyNotFound):
		return false, nil
	}
	return false, fmt.Errorf("handled alerts: get %s: %w", id, err)
}

// mark records that id's action succeeded.
func (h *handled) mark(ctx context.Context, id string, r record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("handled alerts: %w", err)
	}
	if _, err := h.kv.Put(ctx, h.key(id), b); err != nil {
		return fmt.Errorf("handled alerts: put %s: %w", id, err)
	}
	return nil
}
