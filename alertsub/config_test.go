package alertsub

import (
	"testing"

	"github.com/physd/physd/daemon"
)

// The board's embedded server lets its subscriber keep exactly this bucket.
func TestDefaultBucketIsTheBoards(t *testing.T) {
	if DefaultBucket != daemon.AlertsBucket {
		t.Errorf("DefaultBucket %q, the embedded server allows %q", DefaultBucket, daemon.AlertsBucket)
	}
}
