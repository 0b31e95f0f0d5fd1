package nn

import (
	"bytes"
	"errors"
	"hash/crc32"
	"strings"
	"testing"
)

// trainedTinyEncoder returns a small encoder whose running statistics have
// moved away from their initial values, and its checkpoint bytes.
func trainedTinyEncoder(t *testing.T, seed uint64) (*Sequential, []byte) {
	t.Helper()
	rng := newRNG(seed)
	enc := NewPaperEncoder(rng, []int{2, 3, 4}, 5)
	if _, err := enc.Forward(randTensor(rng, 1, 4, 1, 9, 9), true); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := SaveParams(&buf, CheckpointParams(enc), map[string][]float64{"norm": {0.5, 2}, "empty": nil}); err != nil {
		t.Fatal(err)
	}
	return enc, buf.Bytes()
}

func snapshot(ps []*Param) [][]float64 {
	var s [][]float64
	for _, p := range ps {
		s = append(s, append([]float64(nil), f64(p.Value)...))
	}
	return s
}

func equalSnapshots(a, b [][]float64) bool {
	for i := range a {
		for j := range a[i] {
			if a[i][j] != b[i][j] {
				return false
			}
		}
	}
	return len(a) == len(b)
}

func TestCheckpointRoundTrip(t *testing.T) {
	src, data := trainedTinyEncoder(t, 1)
	dst := NewPaperEncoder(newRNG(2), []int{2, 3, 4}, 5)
	extra, err := LoadCheckpoint(bytes.NewReader(data), CheckpointParams(dst))
	if err != nil {
		t.Fatal(err)
	}
	if !equalSnapshots(snapshot(CheckpointParams(src)), snapshot(CheckpointParams(dst))) {
		t.Fatal("loaded values differ from saved ones")
	}
	if len(extra) != 2 || len(extra["norm"]) != 2 || extra["norm"][1] != 2 || len(extra["empty"]) != 0 {
		t.Fatalf("extra = %v", extra)
	}
	x := randTensor(newRNG(3), 1, 2, 1, 9, 9)
	ys, err := src.Forward(x, false)
	if err != nil {
		t.Fatal(err)
	}
	yd, err := dst.Forward(x, false)
	if err != nil {
		t.Fatal(err)
	}
	for i := range f64(ys) {
		if f64(ys)[i] != f64(yd)[i] {
			t.Fatalf("eval outputs differ after load: %v vs %v", f64(ys), f64(yd))
		}
	}
	// Saving is deterministic.
	var again bytes.Buffer
	if err := SaveParams(&again, CheckpointParams(dst), map[string][]float64{"empty": nil, "norm": {0.5, 2}}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again.Bytes(), data) {
		t.Error("re-saved checkpoint differs")
	}
}

func TestCheckpointCorruption(t *testing.T) {
	_, data := trainedTinyEncoder(t, 1)
	dst := NewPaperEncoder(newRNG(2), []int{2, 3, 4}, 5)
	params := CheckpointParams(dst)
	before := snapshot(params)
	for cut := 0; cut < len(data); cut++ {
		if err := LoadParams(bytes.NewReader(data[:cut]), params); !errors.Is(err, ErrCheckpoint) {
			t.Fatalf("truncated to %d of %d bytes: err = %v", cut, len(data), err)
		}
	}
	bad := bytes.Clone(data)
	for i := range bad {
		for _, mask := range []byte{0x01, 0x80, 0xff} {
			bad[i] ^= mask
			if err := LoadParams(bytes.NewReader(bad), params); !errors.Is(err, ErrCheckpoint) {
				t.Fatalf("byte %d ^ %#x: err = %v", i, mask, err)
			}
			bad[i] ^= mask
		}
	}
	if !equalSnapshots(before, snapshot(params)) {
		t.Fatal("failed loads modified the model")
	}
	err := LoadParams(bytes.NewReader(data[:len(data)-9]), params)
	t.Logf("truncated: %v", err)
	bad[100] ^= 1
	err = LoadParams(bytes.NewReader(bad), params)
	t.Logf("flipped:   %v", err)
	if !strings.Contains(err.Error(), "checksum") {
		t.Errorf("flipped byte error does not mention the checksum: %v", err)
	}
	err = LoadParams(bytes.NewReader(append(bytes.Clone(data), 0)), params)
	t.Logf("trailing:  %v", err)
}

func TestCheckpointMismatch(t *testing.T) {
	_, data := trainedTinyEncoder(t, 1)
	check := func(name string, params []*Param, want string) {
		t.Helper()
		err := LoadParams(bytes.NewReader(data), params)
		if !errors.Is(err, ErrCheckpoint) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want mention of %q", name, err, want)
		}
		t.Logf("%s: %v", name, err)
	}
	wider := NewPaperEncoder(newRNG(2), []int{2, 3, 5}, 5)
	check("shape", CheckpointParams(wider), "block3.conv1.weight")
	small := NewPaperEncoder(newRNG(2), []int{2, 3, 4}, 5)
	check("no buffers", small.Params(), "block1.bn1.running_mean")
	check("missing", append(CheckpointParams(small), newParam("extra.weight", 2)), "extra.weight")
	if err := LoadParams(strings.NewReader("not a checkpoint at all, clearly"), small.Params()); !errors.Is(err, ErrCheckpoint) {
		t.Errorf("bad magic: err = %v", err)
	}
	if err := SaveParams(&bytes.Buffer{}, []*Param{newParam("a", 1), newParam("a", 2)}, nil); err == nil {
		t.Error("SaveParams accepted duplicate names")
	}
}

func FuzzLoadParams(f *testing.F) {
	enc := NewPaperEncoder(newRNG(5), []int{1, 1, 1}, 1)
	var buf bytes.Buffer
	if err := SaveParams(&buf, CheckpointParams(enc), map[string][]float64{"x": {1}}); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte(checkpointMagic))
	f.Fuzz(func(t *testing.T, data []byte) {
		// Must never panic; the CRC makes random inputs fail early, so also
		// parse with a recomputed checksum to reach the record decoder.
		_ = LoadParams(bytes.NewReader(data), CheckpointParams(enc))
		if len(data) >= headerLen+4 {
			fixed := bytes.Clone(data)
			fixed = withValidHeader(fixed)
			_ = LoadParams(bytes.NewReader(fixed), CheckpointParams(enc))
		}
	})
}

// withValidHeader rewrites the payload length and CRC of b so that only the
// record structure can be wrong.
func withValidHeader(b []byte) []byte {
	copy(b, checkpointMagic)
	b[8], b[9], b[10], b[11] = 1, 0, 0, 0
	n := uint64(len(b) - headerLen - 4)
	for i := 0; i < 8; i++ {
		b[12+i] = byte(n >> (8 * i))
	}
	sum := crc32IEEE(b[:len(b)-4])
	for i := 0; i < 4; i++ {
		b[len(b)-4+i] = byte(sum >> (8 * i))
	}
	return b
}

func crc32IEEE(b []byte) uint32 { return crc32.ChecksumIEEE(b) }
