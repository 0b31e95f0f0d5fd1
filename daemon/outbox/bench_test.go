package outbox

import (
	"strings"
	"testing"
)

// BenchmarkAppendRemove measures one message through the outbox: Append
// (write, fsync, rename, directory fsync), Front (read and verify) and
// Remove (unlink, directory fsync). It is bound by the disk's fsync
// latency, not by the CPU.
func BenchmarkAppendRemove(b *testing.B) {
	o := open(b, b.TempDir(), Options{})
	m := msg(Essential, 1, `{"schema":"physd.estimate/1","camera":"cam1","fn_hz":1.2345,"zeta":0.0123,`+strings.Repeat(`"x":0,`, 60)+`"ok":true}`)
	b.SetBytes(int64(len(m.Data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := o.Append(m); err != nil {
			b.Fatal(err)
		}
		f, ok, err := o.Front()
		if err != nil || !ok {
			b.Fatalf("Front: %v, %v", ok, err)
		}
		if err := o.Remove(f.Seq); err != nil {
			b.Fatal(err)
		}
	}
}
