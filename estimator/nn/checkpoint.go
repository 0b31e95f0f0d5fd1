package nn

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"slices"
)

// Checkpoint format constants; see SaveParams for the layout.
const (
	checkpointMagic   = "PHYSDNN\x00"
	checkpointVersion = 1
	headerLen         = 8 + 4 + 8
	maxNameLen        = 1 << 16
	maxRank           = 8
)

// ErrCheckpoint is wrapped by every error LoadParams and LoadCheckpoint
// return for malformed, corrupt or mismatched checkpoint data.
var ErrCheckpoint = errors.New("nn: invalid checkpoint")

// SaveParams writes params (names, shapes, values) and the optional extra
// named vectors to w. Names must be non-empty and unique among params and
// among extra. To capture BatchNorm running statistics, pass
// CheckpointParams(model), which includes the non-trainable Buffers; extra
// is for caller metadata (e.g. normalisation constants) and is returned by
// LoadCheckpoint. The output is a deterministic function of the inputs.
//
// File format, version 1; all integers little-endian:
//
//	header  magic [8]byte = "PHYSDNN\x00"
//	        version uint32 = 1
//	        payloadLen uint64   (bytes of payload)
//	payload nParams uint32, then per param, in the order given:
//	            nameLen uint32, name [nameLen]byte,
//	            rank uint32, dims [rank]uint32, values [Π dims]float64 (IEEE 754 bits)
//	        nExtra uint32, then per extra entry, sorted by name:
//	            nameLen uint32, name [nameLen]byte, count uint32, values [count]float64
//	trailer crc32 uint32        (IEEE, over header and payload)
//
// The explicit payload length lets LoadParams tell truncation from corruption.
func SaveParams(w io.Writer, params []*Param, extra map[string][]float64) error {
	var buf bytes.Buffer
	buf.WriteString(checkpointMagic)
	le := binary.LittleEndian
	buf.Write(le.AppendUint32(nil, checkpointVersion))
	buf.Write(make([]byte, 8)) // payloadLen, patched below

	seen := make(map[string]bool, len(params))
	buf.Write(le.AppendUint32(nil, uint32(len(params))))
	for i, p := range params {
		if p == nil || p.Value == nil {
			return fmt.Errorf("nn: SaveParams: param %d is nil", i)
		}
		if err := checkName(p.Name, seen); err != nil {
			return fmt.Errorf("nn: SaveParams: param %d: %w", i, err)
		}
		shape, data, err := float64Data("nn: SaveParams", fmt.Sprintf("param %q", p.Name), p.Value, 1, anyRank)
		if err != nil {
			return err
		}
		if len(shape) > maxRank {
			return fmt.Errorf("nn: SaveParams: param %q has rank %d > %d", p.Name, len(shape), maxRank)
		}
		writeName(&buf, p.Name)
		buf.Write(le.AppendUint32(nil, uint32(len(shape))))
		for _, d := range shape {
			if d > math.MaxUint32 {
				return fmt.Errorf("nn: SaveParams: param %q dimension %d too large", p.Name, d)
			}
			buf.Write(le.AppendUint32(nil, uint32(d)))
		}
		writeFloats(&buf, data)
	}

	names := make([]string, 0, len(extra))
	for k := range extra {
		names = append(names, k)
	}
	slices.Sort(names) // deterministic output for identical inputs
	seen = make(map[string]bool, len(extra))
	buf.Write(le.AppendUint32(nil, uint32(len(names))))
	for _, k := range names {
		if err := checkName(k, seen); err != nil {
			return fmt.Errorf("nn: SaveParams: extra: %w", err)
		}
		if len(extra[k]) > math.MaxUint32 {
			return fmt.Errorf("nn: SaveParams: extra %q too long", k)
		}
		writeName(&buf, k)
		buf.Write(le.AppendUint32(nil, uint32(len(extra[k]))))
		writeFloats(&buf, extra[k])
	}

	b := buf.Bytes()
	le.PutUint64(b[12:20], uint64(len(b)-headerLen))
	b = le.AppendUint32(b, crc32.ChecksumIEEE(b))
	if _, err := w.Write(b); err != nil {
		return fmt.Errorf("nn: SaveParams: %w", err)
	}
	return nil
}

func checkName(name string, seen map[string]bool) error {
	switch {
	case name == "":
		return errors.New("empty name")
	case len(name) > maxNameLen:
		return fmt.Errorf("name of %d bytes longer than %d", len(name), maxNameLen)
	case seen[name]:
		return fmt.Errorf("duplicate name %q", name)
	}
	seen[name] = true
	return nil
}

func writeName(buf *bytes.Buffer, name string) {
	buf.Write(binary.LittleEndian.AppendUint32(nil, uint32(len(name))))
	buf.WriteString(name)
}

func writeFloats(buf *bytes.Buffer, v []float64) {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
	}
	buf.Write(b)
}

// LoadParams reads a checkpoint written by SaveParams into params, matching
// by name. The file must contain exactly the names in params, each with the
// same shape; extra entries are validated and ignored. Nothing is modified
// unless the whole checkpoint is valid. Errors about the data (bad magic,
// version, length, checksum, structure, missing, unknown or mis-shaped
// params) wrap ErrCheckpoint and name what mismatched; read errors and
// invalid params (nil, duplicate names) are returned as such.
func LoadParams(r io.Reader, params []*Param) error {
	_, err := LoadCheckpoint(r, params)
	return err
}

// LoadCheckpoint is LoadParams that also returns the extra vectors stored
// by SaveParams (an empty map if there were none).
func LoadCheckpoint(r io.Reader, params []*Param) (map[string][]float64, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("nn: LoadParams: read: %w", err)
	}
	fail := func(format string, args ...any) error {
		return fmt.Errorf("nn: LoadParams: "+format+": %w", append(args, ErrCheckpoint)...)
	}
	le := binary.LittleEndian
	if len(b) < len(checkpointMagic) || string(b[:len(checkpointMagic)]) != checkpointMagic {
		return nil, fail("bad magic header %q, want %q", b[:min(len(b), len(checkpointMagic))], checkpointMagic)
	}
	if len(b) < headerLen+4 {
		return nil, fail("truncated: %d bytes, shorter than header and checksum (%d)", len(b), headerLen+4)
	}
	if v := le.Uint32(b[8:12]); v != checkpointVersion {
		return nil, fail("unsupported version %d, want %d", v, checkpointVersion)
	}
	payload := le.Uint64(b[12:20])
	if have := uint64(len(b) - headerLen - 4); have != payload {
		kind := "truncated"
		if have > payload {
			kind = "trailing data"
		}
		return nil, fail("%s: payload is %d bytes, header declares %d", kind, have, payload)
	}
	body, sum := b[:len(b)-4], le.Uint32(b[len(b)-4:])
	if got := crc32.ChecksumIEEE(body); got != sum {
		return nil, fail("checksum mismatch: stored %08x, computed %08x (file corrupt)", sum, got)
	}

	d := decoder{b: body[headerLen:]}
	type record struct {
		shape []int
		data  []float64
	}
	stored := make(map[string]record)
	np := d.u32()
	for i := uint32(0); i < np && d.err == nil; i++ {
		name := d.name()
		rank := d.u32()
		if rank > maxRank {
			return nil, fail("param %d %q: rank %d > %d", i, name, rank, maxRank)
		}
		shape := make([]int, rank)
		for j := range shape {
			shape[j] = int(d.u32())
		}
		data := d.floats(shape)
		if d.err != nil {
			break
		}
		if _, dup := stored[name]; dup {
			return nil, fail("duplicate param %q", name)
		}
		stored[name] = record{shape, data}
	}
	extra := make(map[string][]float64)
	ne := d.u32()
	for i := uint32(0); i < ne && d.err == nil; i++ {
		name := d.name()
		data := d.floats([]int{int(d.u32())})
		if d.err != nil {
			break
		}
		if _, dup := extra[name]; dup {
			return nil, fail("duplicate extra %q", name)
		}
		extra[name] = data
	}
	if d.err != nil {
		return nil, fail("malformed payload at byte %d: %v", headerLen+d.off, d.err)
	}
	if len(d.b) != d.off {
		return nil, fail("%d unparsed payload bytes", len(d.b)-d.off)
	}

	// Validate everything before writing anything, so a mismatch leaves the
	// model untouched.
	targets := make([][]float64, len(params))
	want := make(map[string]bool, len(params))
	for i, p := range params {
		if p == nil || p.Value == nil {
			return nil, fmt.Errorf("nn: LoadParams: model param %d is nil", i)
		}
		if want[p.Name] {
			return nil, fmt.Errorf("nn: LoadParams: duplicate model param name %q", p.Name)
		}
		want[p.Name] = true
		shape, data, err := float64Data("nn: LoadParams", fmt.Sprintf("model param %q", p.Name), p.Value, 1, anyRank)
		if err != nil {
			return nil, err
		}
		if p.Value.IsMaterializable() {
			return nil, fmt.Errorf("nn: LoadParams: model param %q is a view and cannot be loaded in place", p.Name)
		}
		rec, ok := stored[p.Name]
		if !ok {
			return nil, fail("param %q missing from checkpoint", p.Name)
		}
		if !sameShape(rec.shape, shape) {
			return nil, fail("param %q has shape %v in checkpoint, model wants %v", p.Name, rec.shape, shape)
		}
		targets[i] = data
	}
	var unknown []string
	for name := range stored {
		if !want[name] {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return nil, fail("checkpoint params %q not in model", unknown)
	}
	for i, p := range params {
		copy(targets[i], stored[p.Name].data)
	}
	return extra, nil
}

// decoder reads little-endian fields from b, recording the first error
// (reads after an error return zero values) so parsing never indexes out of
// range and never allocates more than the remaining input could hold.
type decoder struct {
	b   []byte
	off int
	err error
}

func (d *decoder) take(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || n > len(d.b)-d.off {
		d.err = fmt.Errorf("need %d bytes, %d left", n, len(d.b)-d.off)
		return nil
	}
	s := d.b[d.off : d.off+n]
	d.off += n
	return s
}

func (d *decoder) u32() uint32 {
	s := d.take(4)
	if s == nil {
		return 0
	}
	return binary.LittleEndian.Uint32(s)
}

func (d *decoder) name() string {
	n := d.u32()
	if d.err == nil && n > maxNameLen {
		d.err = fmt.Errorf("name length %d > %d", n, maxNameLen)
	}
	return string(d.take(int(n)))
}

// floats reads Π shape float64 values, checking the product against the
// remaining bytes as it grows so corrupt dimensions cannot overflow.
func (d *decoder) floats(shape []int) []float64 {
	if d.err != nil {
		return nil
	}
	left := (len(d.b) - d.off) / 8
	n := 1
	for _, s := range shape {
		if s < 0 || (s > 0 && n > left/s) {
			d.err = fmt.Errorf("shape %v needs more values than the %d left", shape, left)
			return nil
		}
		n *= s
	}
	raw := d.take(8 * n)
	if d.err != nil {
		return nil
	}
	v := make([]float64, n)
	for i := range v {
		v[i] = math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:]))
	}
	return v
}
