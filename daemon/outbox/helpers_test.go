package outbox

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/physd/physd/internal/physdtest"
)

// testLogger logs everything to a buffer the test can search.
func testLogger() (*slog.Logger, *physdtest.Log) {
	buf := &physdtest.Log{}
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug})), buf
}

// open opens dir or fails the test; the Outbox is closed at cleanup.
func open(t testing.TB, dir string, opt Options) *Outbox {
	t.Helper()
	o, err := Open(dir, opt)
	if err != nil {
		t.Fatalf("Open(%s): %v", dir, err)
	}
	t.Cleanup(func() { o.Close() })
	return o
}

// msg is a message as physd sends them: subject and MsgID from the kind
// and a number.
func msg(class Class, n int, data string) Message {
	kind := "diagnostic"
	if class == Essential {
		kind = "estimate"
	}
	return Message{
		Subject: "physd.cam1." + kind,
		MsgID:   fmt.Sprintf("cam1.%s.%d", kind, n),
		Class:   class,
		Data:    []byte(data),
	}
}

// mustAppend appends and fails the test on error; it returns the
// evicted messages.
func mustAppend(t testing.TB, o *Outbox, m Message) []Message {
	t.Helper()
	ev, err := o.Append(m)
	if err != nil {
		t.Fatalf("Append(%s): %v", m.MsgID, err)
	}
	return ev
}

// drain publishes nothing: it takes every message off the outbox in
// order with Front and Remove, and returns them.
func drain(t testing.TB, o *Outbox) []Message {
	t.Helper()
	var out []Message
	for {
		m, ok, err := o.Front()
		if err != nil {
			t.Fatalf("Front: %v", err)
		}
		if !ok {
			return out
		}
		if err := o.Remove(m.Seq); err != nil {
			t.Fatalf("Remove(%d): %v", m.Seq, err)
		}
		out = append(out, m)
	}
}

// msgIDs lists the MsgIDs of ms, for compact comparisons.
func msgIDs(ms []Message) []string {
	ids := make([]string, len(ms))
	for i, m := range ms {
		ids[i] = m.MsgID
	}
	return ids
}

// sameMessage compares everything but Seq; empty and nil Data are equal.
func sameMessage(t testing.TB, got, want Message) {
	t.Helper()
	if got.Subject != want.Subject || got.MsgID != want.MsgID || got.Class != want.Class ||
		!bytes.Equal(got.Data, want.Data) || !reflect.DeepEqual(got.Header, want.Header) {
		t.Errorf("message:\n got  %+v\n want %+v", got, want)
	}
}

// dirFiles lists the file names in dir, sorted.
func dirFiles(t testing.TB, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	return names
}

// setAside lists the files in dir that were set aside, by original name.
func setAsideFiles(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, n := range dirFiles(t, dir) {
		if orig, _, ok := strings.Cut(n, setAsideTag); ok {
			out[orig] = n
		}
	}
	return out
}

// wantErrIs fails unless err wraps target.
func wantErrIs(t testing.TB, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("error %v, want one wrapping %v", err, target)
	}
}

// recordPath is where seq's record lives in dir.
func recordPath(dir string, seq uint64) string { return filepath.Join(dir, recordName(seq)) }
