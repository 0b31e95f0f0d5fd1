//go:build !nocv

package stream

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/bluenviron/gortsplib/v5"
	"github.com/bluenviron/gortsplib/v5/pkg/description"
	"github.com/bluenviron/gortsplib/v5/pkg/format"

	"github.com/physd/physd/internal/rtspserver"
)

// ffmpegJPEGs encodes n frames of ffmpeg's test pattern at size as
// baseline JPEGs with the standard Huffman tables RFC 2435 assumes.
func ffmpegJPEGs(t *testing.T, size string, n int) [][]byte {
	t.Helper()
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Skip("ffmpeg not installed")
	}
	dir := t.TempDir()
	out, err := exec.Command("ffmpeg", "-v", "error", "-f", "lavfi", "-i", "testsrc=size="+size+":rate=10",
		"-frames:v", strconv.Itoa(n), "-c:v", "mjpeg", "-huffman", "default", "-pix_fmt", "yuvj420p", "-q:v", "4",
		filepath.Join(dir, "f%02d.jpg")).CombinedOutput()
	if err != nil {
		t.Fatalf("ffmpeg: %v: %s", err, out)
	}
	var jpgs [][]byte
	for i := 1; i <= n; i++ {
		b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("f%02d.jpg", i)))
		if err != nil {
			t.Fatal(err)
		}
		jpgs = append(jpgs, b)
	}
	return jpgs
}

// An RTSP camera sending MJPEG: ffmpeg's JPEGs published to a real RTSP
// server on loopback, with one JPEG whose scan is garbage after every few
// small pictures and a switch to twice the resolution. The native reader
// must skip and count each bad picture (a jump in Seq, DecodeErrors), and
// follow the size change.
func TestRTSPMJPEGCorruptAndResize(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	small, large := ffmpegJPEGs(t, "160x120", 4), ffmpegJPEGs(t, "320x240", 4)
	bad := append([]byte(nil), small[0]...)
	// Keep the headers (the depacketiser needs them), ruin the scan.
	sos := -1
	for i := 0; i+1 < len(bad); i++ {
		if bad[i] == 0xFF && bad[i+1] == 0xDA {
			sos = i
			break
		}
	}
	if sos < 0 {
		t.Fatal("no start of scan in ffmpeg's JPEG")
	}
	for i := sos + 20; i < len(bad)-2; i++ {
		bad[i] = 0xFF // fill bytes everywhere: no decodable MCU
	}
	bad = append(bad[:sos+40], 0xFF, 0xD9) // and truncated

	srv, err := rtspserver.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	mj := &format.MJPEG{}
	medi := &description.Media{Type: description.MediaTypeVideo, Formats: []format.Format{mj}}
	pub := &gortsplib.Client{}
	if err := pub.StartRecording(srv.URL("cam"), &description.Session{Medias: []*description.Media{medi}}); err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	enc, err := mj.CreateEncoder()
	if err != nil {
		t.Fatal(err)
	}
	// The publisher repeats small×4, bad, large×4, bad until the reader
	// has what it needs or 200 pictures went out.
	pubDone := make(chan error, 1)
	pctx, stopPub := context.WithCancel(ctx)
	defer stopPub()
	go func() {
		seq := append(append(append(append([][]byte{}, small...), bad), large...), bad)
		var ts uint32
		for i := 0; i < 200 && pctx.Err() == nil; i++ {
			pkts, err := enc.Encode(seq[i%len(seq)])
			if err != nil {
				pubDone <- err
				return
			}
			for _, p := range pkts {
				p.Timestamp = ts
				if err := pub.WritePacketRTP(medi, p); err != nil {
					pubDone <- err
					return
				}
			}
			ts += 9000 // 10 fps
			time.Sleep(20 * time.Millisecond)
		}
		pubDone <- nil
	}()
	if err := srv.WaitPublished(ctx, "cam"); err != nil {
		t.Fatal(err)
	}

	src, err := NewRTSPSource(srv.URL("cam"), RTSPOptions{Preprocess: Preprocess{Size: 32}, Timeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var frames []Frame
	errEnough := errors.New("enough")
	sizes := map[int]int{}
	err = src.Run(ctx, func(f Frame) error {
		frames = append(frames, f)
		sizes[f.SrcW]++
		if len(frames) >= 30 && sizes[160] > 0 && sizes[320] > 0 {
			return errEnough
		}
		return nil
	})
	stopPub()
	if !errors.Is(err, errEnough) {
		t.Fatalf("Run: %v after %d frames", err, len(frames))
	}
	if perr := <-pubDone; perr != nil && !errors.Is(perr, context.Canceled) {
		t.Logf("publisher: %v", perr)
	}
	jumps := 0
	for i := 1; i < len(frames); i++ {
		a, b := frames[i-1], frames[i]
		if b.Seq != a.Seq+1 {
			jumps++
			if b.Seq != a.Seq+2 || a.SrcW == b.SrcW {
				t.Errorf("frames %d→%d: Seq %d→%d, size %d→%d: a bad picture sits exactly between the sizes",
					i-1, i, a.Seq, b.Seq, a.SrcW, b.SrcW)
			}
		} else if a.SrcW != b.SrcW {
			t.Errorf("frames %d→%d: size %d→%d with no skipped picture between", i-1, i, a.SrcW, b.SrcW)
		}
		if dt := b.Time - a.Time; dt != time.Duration(b.Seq-a.Seq)*100*time.Millisecond {
			t.Errorf("frames %d→%d: Time step %v for a Seq step of %d at 10 fps", i-1, i, dt, b.Seq-a.Seq)
		}
		if w, h := (Preprocess{Size: 32}).OutputSize(b.SrcW, b.SrcH); b.W != w || b.H != h {
			t.Fatalf("frame %d is %dx%d after preprocessing of %dx%d, want %dx%d", i, b.W, b.H, b.SrcW, b.SrcH, w, h)
		}
	}
	if jumps == 0 || src.DecodeErrors() != int64(jumps) {
		t.Errorf("DecodeErrors %d, Seq jumps %d: want one counted error per bad picture, at least one", src.DecodeErrors(), jumps)
	}
	t.Logf("%d frames (%v by source width), %d bad pictures skipped and counted", len(frames), sizes, jumps)
}
