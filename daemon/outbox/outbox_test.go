package outbox

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	want := []Message{
		msg(Essential, 1, `{"schema":"physd.estimate/1","fn_hz":1.25}`),
		{Subject: "physd.cam1.diagnostic", MsgID: "cam1.diagnostic-psd.1", Class: Diagnostic,
			Header: map[string][]string{"Physd-Window": {"17"}, "X-Multi": {"a", "b\tc", ""}}, Data: []byte("{}")},
		msg(Essential, 2, ""), // empty payload
		{Subject: "physd.cam1.alert", MsgID: "cam1.alert-drift.3", Class: Essential,
			Header: map[string][]string{"Content-Type": {"application/json"}}, Data: []byte{0, 1, 2, 0xff}},
		msg(Diagnostic, 4, strings.Repeat("x", 10000)),
	}
	o := open(t, dir, Options{})
	for i, m := range want {
		if ev := mustAppend(t, o, m); len(ev) != 0 {
			t.Fatalf("Append %d evicted %v", i, msgIDs(ev))
		}
	}
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	for _, n := range dirFiles(t, dir) {
		if !strings.HasSuffix(n, recordExt) {
			t.Errorf("file %s left after Close; want only records", n)
		}
	}

	o = open(t, dir, Options{})
	if o.Len() != len(want) {
		t.Fatalf("Len after reopen = %d, want %d", o.Len(), len(want))
	}
	got := drain(t, o)
	if len(got) != len(want) {
		t.Fatalf("drained %d messages, want %d", len(got), len(want))
	}
	for i := range want {
		sameMessage(t, got[i], want[i])
		if got[i].Seq != uint64(i+1) {
			t.Errorf("message %d: Seq %d, want %d", i, got[i].Seq, i+1)
		}
	}
	if n := dirFiles(t, dir); len(n) != 0 {
		t.Errorf("files left after draining: %v", n)
	}
	if s := o.Stats(); s != (Stats{}) {
		t.Errorf("Stats after draining = %+v, want zero", s)
	}
}

func TestRemoveThenReopen(t *testing.T) {
	dir := t.TempDir()
	o := open(t, dir, Options{})
	for i := 1; i <= 4; i++ {
		mustAppend(t, o, msg(Essential, i, fmt.Sprint(i)))
	}
	// The front, then one from the middle.
	for _, seq := range []uint64{1, 3} {
		if err := o.Remove(seq); err != nil {
			t.Fatalf("Remove(%d): %v", seq, err)
		}
	}
	wantErrIs(t, o.Remove(3), ErrNotQueued)
	wantErrIs(t, o.Remove(99), ErrNotQueued)
	o.Close()

	o = open(t, dir, Options{})
	got := drain(t, o)
	if ids, want := msgIDs(got), []string{"cam1.estimate.2", "cam1.estimate.4"}; !slices.Equal(ids, want) {
		t.Errorf("after reopen: %v, want %v", ids, want)
	}
	if got[0].Seq != 2 || got[1].Seq != 4 {
		t.Errorf("Seqs %d, %d; want 2, 4", got[0].Seq, got[1].Seq)
	}
}

func TestSeqIncreasesAcrossReopen(t *testing.T) {
	dir := t.TempDir()
	o := open(t, dir, Options{})
	for i := 1; i <= 3; i++ {
		mustAppend(t, o, msg(Diagnostic, i, "d"))
	}
	// The highest Seq stays queued; the others go.
	for _, seq := range []uint64{1, 2} {
		if err := o.Remove(seq); err != nil {
			t.Fatal(err)
		}
	}
	o.Close()
	o = open(t, dir, Options{})
	mustAppend(t, o, msg(Essential, 4, "e"))
	o.Close()
	o = open(t, dir, Options{})
	got := drain(t, o)
	var seqs []uint64
	for _, m := range got {
		seqs = append(seqs, m.Seq)
	}
	if !slices.Equal(seqs, []uint64{3, 4}) {
		t.Errorf("Seqs after two reopens: %v, want [3 4]", seqs)
	}
}

func TestEvictionByCount(t *testing.T) {
	dir := t.TempDir()
	log, logs := testLogger()
	o := open(t, dir, Options{MaxMessages: 4, Logger: log})
	for _, m := range []Message{msg(Essential, 1, "e1"), msg(Diagnostic, 1, "d1"), msg(Essential, 2, "e2"), msg(Diagnostic, 2, "d2")} {
		if ev := mustAppend(t, o, m); len(ev) != 0 {
			t.Fatalf("evicted %v before the bound", msgIDs(ev))
		}
	}
	steps := []struct {
		m       Message
		evicted []string
	}{
		// Full: diagnostics go first, oldest first, even though an
		// essential message is older.
		{msg(Essential, 3, "e3"), []string{"cam1.diagnostic.1"}},
		{msg(Essential, 4, "e4"), []string{"cam1.diagnostic.2"}},
		// No diagnostic left: the oldest essential goes.
		{msg(Essential, 5, "e5"), []string{"cam1.estimate.1"}},
		// A diagnostic never displaces an essential: it is dropped itself.
		{msg(Diagnostic, 3, "d3"), []string{"cam1.diagnostic.3"}},
	}
	for _, s := range steps {
		ev := mustAppend(t, o, s.m)
		if ids := msgIDs(ev); !slices.Equal(ids, s.evicted) {
			t.Errorf("Append(%s) evicted %v, want %v", s.m.MsgID, ids, s.evicted)
		}
	}
	// The publisher had diagnostic 1 (Seq 2) in hand when it was evicted.
	wantErrIs(t, o.Remove(2), ErrNotQueued)
	if ev := mustAppend(t, o, msg(Diagnostic, 9, "d9")); len(ev) != 1 || ev[0].Seq != 0 || ev[0].Class != Diagnostic {
		t.Errorf("dropped incoming diagnostic reported as %+v, want itself with Seq 0", ev)
	}
	st := o.Stats()
	if st.EvictedDiagnostic != 4 || st.EvictedEssential != 1 || st.Queued != 4 {
		t.Errorf("Stats = %+v, want 4 diagnostics and 1 essential evicted, 4 queued", st)
	}
	if n := len(dirFiles(t, dir)); n != 4 {
		t.Errorf("%d files on disk, want 4", n)
	}
	if !strings.Contains(logs.String(), "outbox full") {
		t.Errorf("no warning about the outbox being full in the log:\n%s", logs)
	}
	o.Close()
	o = open(t, dir, Options{MaxMessages: 4})
	want := []string{"cam1.estimate.2", "cam1.estimate.3", "cam1.estimate.4", "cam1.estimate.5"}
	if ids := msgIDs(drain(t, o)); !slices.Equal(ids, want) {
		t.Errorf("queued after reopen: %v, want %v", ids, want)
	}
}

func TestEvictionByBytes(t *testing.T) {
	dir := t.TempDir()
	d1, d2, e1 := msg(Diagnostic, 1, strings.Repeat("a", 100)), msg(Diagnostic, 2, strings.Repeat("b", 100)), msg(Essential, 1, strings.Repeat("c", 100))
	e2, e3 := msg(Essential, 2, strings.Repeat("d", 150)), msg(Essential, 3, strings.Repeat("e", 100))
	size := func(m Message) int64 {
		m.Seq = 1
		b, err := encodeRecord(&m)
		if err != nil {
			t.Fatal(err)
		}
		return int64(len(b))
	}
	// Room for exactly d1, d2 and e1; the count bound is far away.
	maxBytes := size(d1) + size(d2) + size(e1)
	o := open(t, dir, Options{MaxBytes: maxBytes})
	for _, m := range []Message{d1, e1, d2} {
		if ev := mustAppend(t, o, m); len(ev) != 0 {
			t.Fatalf("evicted %v before the bound", msgIDs(ev))
		}
	}
	if got := o.Stats().Bytes; got != maxBytes {
		t.Fatalf("Bytes = %d, want %d", got, maxBytes)
	}
	// e2 is 50 bytes larger than any: both diagnostics must go.
	if ids := msgIDs(mustAppend(t, o, e2)); !slices.Equal(ids, []string{d1.MsgID, d2.MsgID}) {
		t.Errorf("Append(e2) evicted %v, want both diagnostics", ids)
	}
	// Now only essentials: the oldest goes.
	if ids := msgIDs(mustAppend(t, o, e3)); !slices.Equal(ids, []string{e1.MsgID}) {
		t.Errorf("Append(e3) evicted %v, want %s", ids, e1.MsgID)
	}
	st := o.Stats()
	if st.EvictedDiagnostic != 2 || st.EvictedEssential != 1 || st.Queued != 2 || st.Bytes != size(e2)+size(e3) {
		t.Errorf("Stats = %+v, want 2+1 evicted, 2 queued, %d bytes", st, size(e2)+size(e3))
	}
	var onDisk int64
	for _, n := range dirFiles(t, dir) {
		fi, err := os.Stat(dir + "/" + n)
		if err != nil {
			t.Fatal(err)
		}
		onDisk += fi.Size()
	}
	if onDisk != st.Bytes || onDisk > maxBytes {
		t.Errorf("%d bytes on disk, Stats.Bytes %d, bound %d", onDisk, st.Bytes, maxBytes)
	}
	if ids := msgIDs(drain(t, o)); !slices.Equal(ids, []string{e2.MsgID, e3.MsgID}) {
		t.Errorf("queued %v, want e2, e3", ids)
	}
}

func TestOpenEnforcesLoweredBounds(t *testing.T) {
	dir := t.TempDir()
	o := open(t, dir, Options{})
	for i, c := range []Class{Essential, Diagnostic, Essential, Diagnostic, Essential} {
		mustAppend(t, o, msg(c, i, "x"))
	}
	o.Close()
	o = open(t, dir, Options{MaxMessages: 2})
	st := o.Stats()
	if st.EvictedDiagnostic != 2 || st.EvictedEssential != 1 || st.Queued != 2 {
		t.Errorf("Stats after reopening with a lower bound = %+v, want 2+1 evicted, 2 queued", st)
	}
	if ids, want := msgIDs(drain(t, o)), []string{"cam1.estimate.2", "cam1.estimate.4"}; !slices.Equal(ids, want) {
		t.Errorf("queued %v, want %v", ids, want)
	}
}

func TestOversizeRefused(t *testing.T) {
	dir := t.TempDir()
	m := msg(Essential, 1, strings.Repeat("z", 200))
	m.Seq = 1
	rec, err := encodeRecord(&m)
	if err != nil {
		t.Fatal(err)
	}
	// Exactly the size of the record: accepted.
	o := open(t, dir, Options{MaxBytes: int64(len(rec))})
	mustAppend(t, o, m)
	// One byte more: refused, and nothing evicted to make room.
	big := msg(Essential, 2, strings.Repeat("z", 201))
	ev, err := o.Append(big)
	wantErrIs(t, err, ErrTooLarge)
	if len(ev) != 0 || o.Len() != 1 {
		t.Errorf("refused Append evicted %v, Len %d; want nothing evicted, Len 1", msgIDs(ev), o.Len())
	}
	if err != nil && !strings.Contains(err.Error(), big.MsgID) {
		t.Errorf("error %q does not name the message", err)
	}
}

func TestInvalidMessageNamesField(t *testing.T) {
	o := open(t, t.TempDir(), Options{})
	good := msg(Essential, 1, "{}")
	cases := []struct {
		field string
		edit  func(*Message)
	}{
		{"Subject", func(m *Message) { m.Subject = "" }},
		{"Subject", func(m *Message) { m.Subject = "physd.cam 1.estimate" }},
		{"Subject", func(m *Message) { m.Subject = "physd..estimate" }},
		{"Subject", func(m *Message) { m.Subject = "physd.*.estimate" }},
		{"Subject", func(m *Message) { m.Subject = "physd.cam1.>" }},
		{"Subject", func(m *Message) { m.Subject = "physd.cam1\r\n.estimate" }},
		{"Subject", func(m *Message) { m.Subject = strings.Repeat("a", maxSubjectLen+1) }},
		{"MsgID", func(m *Message) { m.MsgID = "" }},
		{"MsgID", func(m *Message) { m.MsgID = "id\r\nX-Injected: 1" }},
		{"Class", func(m *Message) { m.Class = 7 }},
		{"Header", func(m *Message) { m.Header = map[string][]string{"": {"v"}} }},
		{"Header", func(m *Message) { m.Header = map[string][]string{"Bad:Key": {"v"}} }},
		{"Header", func(m *Message) { m.Header = map[string][]string{"nats-msg-id": {"other"}} }},
		{"Header", func(m *Message) { m.Header = map[string][]string{"K": {"line\r\nbreak"}} }},
	}
	for _, c := range cases {
		m := good
		c.edit(&m)
		_, err := o.Append(m)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "field "+c.field) {
			t.Errorf("Append(%+v): error %v, want ErrInvalid naming field %s", m, err, c.field)
		}
	}
	if o.Len() != 0 {
		t.Errorf("Len = %d after only invalid messages", o.Len())
	}
}

func TestOpenOptions(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		dir   string
		opt   Options
		field string
	}{
		{dir, Options{MaxMessages: -1}, "MaxMessages"},
		{dir, Options{MaxBytes: -1}, "MaxBytes"},
		{"", Options{}, "directory"},
	} {
		if _, err := Open(c.dir, c.opt); err == nil || !strings.Contains(err.Error(), c.field) {
			t.Errorf("Open(%q, %+v): error %v, want one naming %s", c.dir, c.opt, err, c.field)
		}
	}
	file := dir + "/file"
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(file, Options{}); err == nil || !strings.Contains(err.Error(), file) {
		t.Errorf("Open on a regular file: error %v, want one naming it", err)
	}
	// Created with owner-only permissions, one level down.
	sub := dir + "/state/outbox"
	open(t, sub, Options{})
	if fi, err := os.Stat(sub); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("created directory: %v, mode %v; want 0700", err, fi.Mode())
	}
}

func TestClosed(t *testing.T) {
	o := open(t, t.TempDir(), Options{})
	mustAppend(t, o, msg(Essential, 1, "x"))
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	if err := o.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	_, err := o.Append(msg(Essential, 2, "x"))
	wantErrIs(t, err, ErrClosed)
	_, _, err = o.Front()
	wantErrIs(t, err, ErrClosed)
	wantErrIs(t, o.Remove(1), ErrClosed)
}

// TestConcurrentAppendRemove runs appenders against a drainer, with the
// bound small enough that eviction races with publication; run with
// -race. Every message is either drained or reported evicted, and the
// drainer sees Seqs in increasing order.
func TestConcurrentAppendRemove(t *testing.T) {
	const writers, perWriter = 4, 60
	o := open(t, t.TempDir(), Options{MaxMessages: 16})
	var (
		mu      sync.Mutex
		evicted = map[string]bool{}
		wg      sync.WaitGroup
	)
	for w := range writers {
		wg.Go(func() {
			for i := range perWriter {
				m := msg(Class(i%2), w*perWriter+i, "payload")
				ev, err := o.Append(m)
				if err != nil {
					t.Errorf("Append: %v", err)
					return
				}
				mu.Lock()
				for _, e := range ev {
					evicted[e.MsgID] = true
				}
				mu.Unlock()
				_ = o.Stats()
			}
		})
	}
	var finished atomic.Bool
	go func() { wg.Wait(); finished.Store(true) }()
	done := make(chan struct{})
	drained := map[string]bool{}
	go func() {
		defer close(done)
		var last uint64
		for {
			m, ok, err := o.Front()
			if err != nil {
				t.Errorf("Front: %v", err)
				return
			}
			if !ok {
				// Appends all happened before finished was set.
				if finished.Load() && o.Len() == 0 {
					return
				}
				runtime.Gosched()
				continue
			}
			if m.Seq <= last {
				t.Errorf("Front returned Seq %d after %d", m.Seq, last)
			}
			last = m.Seq
			if err := o.Remove(m.Seq); err != nil && !errors.Is(err, ErrNotQueued) {
				t.Errorf("Remove(%d): %v", m.Seq, err)
			}
			drained[m.MsgID] = true
		}
	}()
	wg.Wait()
	<-done
	for w := range writers {
		for i := range perWriter {
			id := msg(Class(i%2), w*perWriter+i, "").MsgID
			if !drained[id] && !evicted[id] {
				t.Errorf("%s neither drained nor evicted", id)
			}
		}
	}
	st := o.Stats()
	if got := st.EvictedDiagnostic + st.EvictedEssential; got != int64(len(evicted)) {
		t.Errorf("Stats counts %d evictions, Append reported %d", got, len(evicted))
	}
	if st.Queued != 0 || st.Bytes != 0 {
		t.Errorf("Stats after draining = %+v", st)
	}
}
