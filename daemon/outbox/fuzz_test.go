package outbox

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzDecodeRecord feeds arbitrary bytes to the record decoder: it must
// not panic, must refuse with ErrCorrupt, and anything it accepts must be
// a publishable message that re-encodes to exactly the same bytes, so
// that there is one encoding per message and no field is ignored. The
// committed corpus in testdata/fuzz/FuzzDecodeRecord holds valid records
// and damaged ones.
//
// Random bytes almost never carry a matching CRC, which would keep the
// fuzzer out of the parsing behind the checksum; so each input is also
// tried with its checksum recomputed.
func FuzzDecodeRecord(f *testing.F) {
	for _, b := range sampleRecords(f) {
		f.Add(b)
		f.Add(b[:len(b)-1])
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkDecode(t, b)
		if len(b) >= crcLen {
			checkDecode(t, reseal(b))
		}
	})
}

// checkDecode asserts the decoder's contract on one input.
func checkDecode(t *testing.T, b []byte) {
	t.Helper()
	m, err := decodeRecord(b)
	if err != nil {
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("error %v does not wrap ErrCorrupt", err)
		}
		return
	}
	if err := validate(&m); err != nil {
		t.Fatalf("accepted an invalid message: %v", err)
	}
	again, err := encodeRecord(&m)
	if err != nil {
		t.Fatalf("re-encode: %v", err)
	}
	if !bytes.Equal(again, b) {
		t.Fatalf("accepted record re-encodes differently:\n in  %x\n out %x", b, again)
	}
}
