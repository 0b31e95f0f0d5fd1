package outbox

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"strings"
	"testing"
)

// sampleRecords are valid records of the shapes the outbox stores.
func sampleRecords(t testing.TB) [][]byte {
	t.Helper()
	ms := []Message{
		{Subject: "physd.cam1.diagnostic", MsgID: "cam1.diagnostic-psd.1.2", Class: Diagnostic, Data: []byte(`{"n":1}`), Seq: 1},
		{Subject: "physd.cam1.estimate", MsgID: "cam1.estimate.1.2", Class: Essential, Seq: 42,
			Header: map[string][]string{"B": {"2", ""}, "A": {"1"}, "Empty": {}}, Data: []byte("payload")},
		{Subject: "a", MsgID: "i", Class: Essential, Seq: maxSeq},
	}
	var out [][]byte
	for _, m := range ms {
		b, err := encodeRecord(&m)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// reseal recomputes a record's checksum after a test edits it, so that
// the decoder's later checks are reached.
func reseal(b []byte) []byte {
	b = bytes.Clone(b)
	binary.LittleEndian.PutUint32(b[len(b)-crcLen:], crc32.Checksum(b[:len(b)-crcLen], castagnoli))
	return b
}

func TestRecordRoundTrip(t *testing.T) {
	for _, b := range sampleRecords(t) {
		m, err := decodeRecord(b)
		if err != nil {
			t.Fatalf("decode: %v", err)
		}
		again, err := encodeRecord(&m)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again, b) {
			t.Errorf("re-encoding %+v changed the bytes", m)
		}
	}
}

// TestDecodeRecordDetectsDamage: every truncation and every single-bit
// flip of a valid record is refused as corrupt.
func TestDecodeRecordDetectsDamage(t *testing.T) {
	for _, rec := range sampleRecords(t) {
		for n := range len(rec) {
			if _, err := decodeRecord(rec[:n]); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("truncated to %d of %d bytes: error %v, want ErrCorrupt", n, len(rec), err)
			}
		}
		for i := range len(rec) {
			for bit := range 8 {
				b := bytes.Clone(rec)
				b[i] ^= 1 << bit
				if _, err := decodeRecord(b); !errors.Is(err, ErrCorrupt) {
					t.Fatalf("bit %d of byte %d flipped: error %v, want ErrCorrupt", bit, i, err)
				}
			}
		}
		if _, err := decodeRecord(append(bytes.Clone(rec), 0)); !errors.Is(err, ErrCorrupt) {
			t.Errorf("trailing byte: error %v, want ErrCorrupt", err)
		}
	}
}

// TestDecodeRecordNamesField: each refusal says which field is wrong,
// even with a checksum that matches.
func TestDecodeRecordNamesField(t *testing.T) {
	good := sampleRecords(t)[1]
	edit := func(f func(b []byte) []byte) []byte { return reseal(f(bytes.Clone(good))) }
	noHeader := sampleRecords(t)[0]
	cases := []struct {
		name, field string
		b           []byte
	}{
		{"short", "field length", good[:10]},
		{"magic", "field magic", edit(func(b []byte) []byte { b[0] = 'X'; return b })},
		{"version", "field version", edit(func(b []byte) []byte { b[4] = 2; return b })},
		{"reserved", "field reserved", edit(func(b []byte) []byte { b[7] = 1; return b })},
		{"class", "field Class", edit(func(b []byte) []byte { b[5] = 9; return b })},
		{"seq zero", "field Seq", edit(func(b []byte) []byte { clear(b[8:16]); return b })},
		{"checksum", "field checksum", func() []byte { b := bytes.Clone(good); b[len(b)-1] ^= 1; return b }()},
		{"subject", "field Subject", edit(func(b []byte) []byte { b[fixedLen+5] = ' '; return b })},
		{"header order", "field Header", edit(func(b []byte) []byte {
			// "A" and "B" are the first two keys, each with a 1-byte name.
			i := bytes.Index(b, []byte("\x01\x00\x00\x00A"))
			j := bytes.Index(b, []byte("\x01\x00\x00\x00B"))
			b[i+4], b[j+4] = 'B', 'A'
			return b
		})},
		{"header zero keys", "field Header", func() []byte {
			// A header block holding only a zero count: well formed, but
			// not what the encoder writes for no header.
			b := bytes.Clone(noHeader[:len(noHeader)-crcLen])
			binary.LittleEndian.PutUint32(b[24:], 4)
			body := b[fixedLen:]
			slen, ilen := binary.LittleEndian.Uint32(b[16:]), binary.LittleEndian.Uint32(b[20:])
			split := int(slen + ilen)
			nb := append(bytes.Clone(b[:fixedLen]), body[:split]...)
			nb = append(nb, 0, 0, 0, 0)
			nb = append(nb, body[split:]...)
			return reseal(append(nb, 0, 0, 0, 0))
		}()},
	}
	for _, c := range cases {
		_, err := decodeRecord(c.b)
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), c.field) {
			t.Errorf("%s: error %v, want ErrCorrupt naming %q", c.name, err, c.field)
		}
	}
}
