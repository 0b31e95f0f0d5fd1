package outbox

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCorruptRecordsSetAside damages record files in every way a crash,
// a full disk or bit rot can, then reopens: Open succeeds, each bad file
// is renamed aside (content kept) with a warning naming it and the
// reason, and the good records load in order.
func TestCorruptRecordsSetAside(t *testing.T) {
	dir := t.TempDir()
	o := open(t, dir, Options{})
	for i := 1; i <= 6; i++ {
		mustAppend(t, o, msg(Class(i%2), i, strings.Repeat("p", 40)))
	}
	o.Close()

	read := func(seq uint64) []byte {
		b, err := os.ReadFile(recordPath(dir, seq))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	write := func(name string, b []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// Torn: cut mid-way.
	torn := read(2)[:len(read(2))/2]
	write(recordName(2), torn)
	// Bit rot in the payload.
	flipped := read(4)
	flipped[len(flipped)-crcLen-3] ^= 0x10
	write(recordName(4), flipped)
	// Not a record at all, and an empty one.
	garbage := []byte("this is not an outbox record, just some garbage\n")
	write(recordName(10), garbage)
	write(recordName(11), nil)
	// A good record under another record's name.
	write(recordName(20), read(5))
	// Names that are not ours, in the form a record would have.
	write("abc.msg", read(6))
	write("00000000000000000000.msg", read(6))
	// A crash before a rename.
	write(recordName(12)+".123456.tmp", read(6)[:7])
	// Left alone: set aside by an earlier run, and unrelated files.
	write(recordName(30)+setAsideTag+"1700000000", garbage)
	write("README", []byte("hands off"))

	log, logs := testLogger()
	o = open(t, dir, Options{Logger: log})
	wantAside := map[string]string{
		recordName(2):              "field length",
		recordName(4):              "field checksum",
		recordName(10):             "field magic",
		recordName(11):             "field length",
		recordName(20):             "field Seq",
		"abc.msg":                  "file name",
		"00000000000000000000.msg": "file name",
	}
	if got := o.Stats().SetAside; got != int64(len(wantAside)) {
		t.Errorf("SetAside = %d, want %d", got, len(wantAside))
	}
	aside := setAsideFiles(t, dir)
	for name, reason := range wantAside {
		moved, ok := aside[name]
		if !ok {
			t.Errorf("%s not set aside", name)
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, name)); !os.IsNotExist(err) {
			t.Errorf("%s still under its name (%v)", name, err)
		}
		var line string
		for l := range strings.Lines(logs.String()) {
			if strings.Contains(l, "file="+filepath.Join(dir, name)+" ") {
				line = l
			}
		}
		if !strings.Contains(line, "level=WARN") || !strings.Contains(line, reason) || !strings.Contains(line, moved) {
			t.Errorf("log line for %s = %q, want a warning with %q and %s", name, line, reason, moved)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, aside[recordName(2)])); err != nil || !bytes.Equal(b, torn) {
		t.Errorf("set-aside torn file: %v, content changed", err)
	}
	for _, n := range dirFiles(t, dir) {
		if strings.HasSuffix(n, tempExt) {
			t.Errorf("temporary file %s not removed", n)
		}
	}
	for _, keep := range []string{"README", recordName(30) + setAsideTag + "1700000000"} {
		if _, err := os.Stat(filepath.Join(dir, keep)); err != nil {
			t.Errorf("%s: %v; want it left alone", keep, err)
		}
	}

	// The good ones, in order, and Seq continues after the highest loaded.
	ev := mustAppend(t, o, msg(Essential, 7, "after"))
	if len(ev) != 0 {
		t.Fatalf("evicted %v", msgIDs(ev))
	}
	got := drain(t, o)
	var seqs []uint64
	for _, m := range got {
		seqs = append(seqs, m.Seq)
	}
	if !slices.Equal(seqs, []uint64{1, 3, 5, 6, 7}) {
		t.Errorf("loaded Seqs %v, want [1 3 5 6 7]", seqs)
	}
	for _, m := range got[:4] {
		if !bytes.Equal(m.Data, []byte(strings.Repeat("p", 40))) {
			t.Errorf("Seq %d: data %q", m.Seq, m.Data)
		}
	}
	o.Close()

	// Set-aside files are not looked at again.
	o = open(t, dir, Options{})
	if st := o.Stats(); st.SetAside != 0 || st.Queued != 0 {
		t.Errorf("second reopen: Stats = %+v, want nothing set aside or queued", st)
	}
}

// TestCrashBetweenWriteAndRename leaves temporary files exactly as
// Append would have, had the process died after the write (complete or
// torn) and before the rename: Open removes them, and the message was
// never queued.
func TestCrashBetweenWriteAndRename(t *testing.T) {
	dir := t.TempDir()
	o := open(t, dir, Options{})
	mustAppend(t, o, msg(Essential, 1, "one"))
	mustAppend(t, o, msg(Essential, 2, "two"))
	o.Close()

	m := msg(Essential, 3, "three")
	m.Seq = 3
	rec, err := encodeRecord(&m)
	if err != nil {
		t.Fatal(err)
	}
	for _, content := range [][]byte{rec, rec[:len(rec)/3]} {
		f, err := os.CreateTemp(dir, recordName(3)+".*"+tempExt)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(content); err != nil {
			t.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}

	o = open(t, dir, Options{})
	if files := dirFiles(t, dir); !slices.Equal(files, []string{recordName(1), recordName(2)}) {
		t.Errorf("files after Open: %v, want only the two records", files)
	}
	if st := o.Stats(); st.Queued != 2 || st.SetAside != 0 {
		t.Errorf("Stats = %+v, want 2 queued and nothing set aside", st)
	}
	// The lost append is retried by its caller, and gets Seq 3.
	mustAppend(t, o, msg(Essential, 3, "three"))
	if ids, want := msgIDs(drain(t, o)), []string{"cam1.estimate.1", "cam1.estimate.2", "cam1.estimate.3"}; !slices.Equal(ids, want) {
		t.Errorf("queued %v, want %v", ids, want)
	}
}

// TestFrontSkipsRecordDamagedAfterOpen: a record that goes bad or missing
// while physd runs does not block the outbox.
func TestFrontSkipsRecordDamagedAfterOpen(t *testing.T) {
	dir := t.TempDir()
	log, logs := testLogger()
	o := open(t, dir, Options{Logger: log})
	for i := 1; i <= 3; i++ {
		mustAppend(t, o, msg(Essential, i, "data"))
	}
	b, err := os.ReadFile(recordPath(dir, 1))
	if err != nil {
		t.Fatal(err)
	}
	b[fixedLen] ^= 0xff // first byte of the subject
	if err := os.WriteFile(recordPath(dir, 1), b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(recordPath(dir, 2)); err != nil {
		t.Fatal(err)
	}
	m, ok, err := o.Front()
	if err != nil || !ok || m.Seq != 3 {
		t.Fatalf("Front = Seq %d, %v, %v; want Seq 3", m.Seq, ok, err)
	}
	if st := o.Stats(); st.SetAside != 2 || st.Queued != 1 {
		t.Errorf("Stats = %+v, want 2 set aside, 1 queued", st)
	}
	if _, ok := setAsideFiles(t, dir)[recordName(1)]; !ok {
		t.Errorf("damaged record not set aside: %v", dirFiles(t, dir))
	}
	if !strings.Contains(logs.String(), "vanished") || !strings.Contains(logs.String(), "field checksum") {
		t.Errorf("log does not report both:\n%s", logs)
	}
}
