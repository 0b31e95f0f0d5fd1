package physdtest

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// StreamMessages reads, in order, every message of a JetStream stream on
// subject (a filter; wildcards allowed) that is stored when it is called.
func StreamMessages(ctx context.Context, nc *nats.Conn, stream, subject string) ([]jetstream.Msg, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	cons, err := js.OrderedConsumer(ctx, stream, jetstream.OrderedConsumerConfig{FilterSubjects: []string{subject}})
	if err != nil {
		return nil, err
	}
	info, err := cons.Info(ctx)
	if err != nil {
		return nil, err
	}
	want := int(info.NumPending)
	var out []jetstream.Msg
	for len(out) < want {
		batch, err := cons.Fetch(min(want-len(out), 500), jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			return out, err
		}
		n := len(out)
		for m := range batch.Messages() {
			out = append(out, m)
		}
		if err := batch.Error(); err != nil {
			return out, err
		}
		if len(out) == n {
			return out, fmt.Errorf("stream %s delivered %d of its %d messages on %s, then nothing", stream, n, want, subject)
		}
	}
	return out, nil
}
