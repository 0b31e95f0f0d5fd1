package sim

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"io"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
)

// checkFrames verifies that frames is a non-empty list of non-nil images of
// one size and that fps is a usable frame rate.
func checkFrames(frames []*image.Gray, fps float64) (w, h int, err error) {
	if len(frames) == 0 {
		return 0, 0, errors.New("no frames")
	}
	if !finite(fps) || fps <= 0 {
		return 0, 0, fmt.Errorf("frame rate is %v, want a finite number > 0", fps)
	}
	for i, f := range frames {
		if f == nil {
			return 0, 0, fmt.Errorf("frames[%d] is nil", i)
		}
		b := f.Bounds()
		if b.Dx() > 0 && b.Dy() > 0 && (f.Stride < b.Dx() || b.Dy()-1 > (len(f.Pix)-b.Dx())/max(f.Stride, 1)) {
			return 0, 0, fmt.Errorf("frames[%d]: pixel buffer (%d bytes, stride %d) too short for bounds %v", i, len(f.Pix), f.Stride, b)
		}
		if i == 0 {
			w, h = b.Dx(), b.Dy()
			if w <= 0 || h <= 0 {
				return 0, 0, fmt.Errorf("frames[0] is empty (%v)", b)
			}
			continue
		}
		if b.Dx() != w || b.Dy() != h {
			return 0, 0, fmt.Errorf("frames[%d] is %d×%d, frames[0] is %d×%d", i, b.Dx(), b.Dy(), w, h)
		}
	}
	return w, h, nil
}

// writeRows writes the pixels of f row by row (honouring Stride and Rect).
// If padW or padH is larger than the image, the last column and row are
// repeated up to that size.
func writeRows(w io.Writer, f *image.Gray, padW, padH int) error {
	b := f.Bounds()
	var row []byte
	for y := 0; y < max(b.Dy(), padH); y++ {
		off := f.PixOffset(b.Min.X, b.Min.Y+min(y, b.Dy()-1))
		if off < 0 || off+b.Dx() > len(f.Pix) {
			return fmt.Errorf("image pixel buffer too short for its bounds %v", b)
		}
		src := f.Pix[off : off+b.Dx()]
		if padW > b.Dx() {
			row = append(append(row[:0], src...), bytes.Repeat(src[len(src)-1:], padW-b.Dx())...)
			src = row
		}
		if _, err := w.Write(src); err != nil {
			return err
		}
	}
	return nil
}

// rationalFPS approximates fps > 0 by num/den (continued fractions, den ≤
// 1001000), exactly for integer rates and the usual NTSC-style rates such
// as 30000/1001. Rates outside [1e-6, 1e9] are clamped into that range.
func rationalFPS(fps float64) (num, den int64) {
	fps = math.Min(math.Max(fps, 1e-6), 1e9)
	if fps == math.Trunc(fps) {
		return int64(fps), 1
	}
	const maxDen = 1001 * 1000
	var h0, h1, k0, k1 int64 = 0, 1, 1, 0
	x := fps
	for i := 0; i < 64; i++ {
		a := math.Floor(x)
		if a > maxDen*1e3 {
			break
		}
		ai := int64(a)
		h2, k2 := ai*h1+h0, ai*k1+k0
		if k2 > maxDen {
			break
		}
		h0, h1, k0, k1 = h1, h2, k1, k2
		if x == a || math.Abs(float64(h1)/float64(k1)-fps) <= 1e-12*fps {
			break
		}
		x = 1 / (x - a)
	}
	if k1 == 0 || h1 == 0 {
		return int64(math.Max(1, math.Round(fps*maxDen))), maxDen
	}
	return h1, k1
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(bytes.ToValidUTF8(t.b, nil)))
}

// FFmpegArgs returns the ffmpeg command-line arguments WriteMP4 uses to
// encode raw w×h gray frames read from stdin at fps into path (w and h are
// the encoded size, even numbers). It is exported so that callers can log
// or reproduce the exact encoding.
func FFmpegArgs(path string, w, h int, fps float64, crf int) []string {
	num, den := rationalFPS(fps)
	quality := []string{"-qp", "0"} // lossless luma
	if crf > 0 {
		quality = []string{"-crf", strconv.Itoa(crf)}
	}
	rate := strconv.FormatInt(num, 10) + "/" + strconv.FormatInt(den, 10)
	return append([]string{
		"-hide_banner", "-nostdin", "-nostats", "-loglevel", "error", "-y",
		"-threads", "1", "-filter_threads", "1",
		"-f", "rawvideo", "-pix_fmt", "gray", "-s", fmt.Sprintf("%dx%d", w, h), "-r", rate,
		"-i", "-",
		"-sws_flags", "bicubic+accurate_rnd+full_chroma_int+bitexact",
		"-c:v", "libx264", "-preset", "medium"}, append(quality, "-pix_fmt", "yuv420p",
		"-threads", "1", "-x264-params", "threads=1:lookahead-threads=1:sliced-threads=0",
		"-r", rate,
		"-flags:v", "+bitexact", "-fflags", "+bitexact", "-map_metadata", "-1",
		"-movflags", "+faststart",
		// The file: protocol keeps ffmpeg from reading a path that starts
		// with "-" as an option or one containing ":" as another protocol.
		"-f", "mp4", "file:"+path)...)
}

// WriteMP4 encodes frames as lossless H.264 (libx264 -qp 0: lossless luma), as
// WriteMP4CRF with crf 0.
func WriteMP4(ctx context.Context, path string, frames []*image.Gray, fps float64) error {
	return WriteMP4CRF(ctx, path, frames, fps, 0)
}

// WriteMP4CRF encodes frames as H.264 (libx264, CRF crf, or lossless for crf ≤ 0; yuv420p, one thread,
// bit-exact flags, faststart) in an mp4 file at path with the given frame
// rate, by piping the raw 8-bit gray frames into the ffmpeg command-line
// program (found on PATH). All frames must have the same size; an odd
// width or height is padded to the next even number by repeating the last
// column or row, because yuv420p needs even dimensions.
// Gray levels are stored in the usual limited (TV) range of yuv420p.
//
// If ffmpeg fails, the error includes the tail of its stderr and the
// partial output file is removed. If ffmpeg is not installed the error
// wraps exec.ErrNotFound.
func WriteMP4CRF(ctx context.Context, path string, frames []*image.Gray, fps float64, crf int) error {
	if ctx == nil {
		ctx = context.Background()
	}
	w, h, err := checkFrames(frames, fps)
	if err != nil {
		return fmt.Errorf("sim: WriteMP4 %s: %w", path, err)
	}
	bin, err := exec.LookPath("ffmpeg")
	if err != nil {
		return fmt.Errorf("sim: WriteMP4 %s: ffmpeg not found: %w", path, err)
	}
	ew, eh := w+w%2, h+h%2
	cmd := exec.CommandContext(ctx, bin, FFmpegArgs(path, ew, eh, fps, crf)...)
	stderr := &tailBuffer{max: 4096}
	cmd.Stderr = stderr
	cmd.Stdout = io.Discard
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return fmt.Errorf("sim: WriteMP4 %s: %w", path, err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("sim: WriteMP4 %s: starting ffmpeg: %w", path, err)
	}
	bw := bufio.NewWriterSize(stdin, 1<<16)
	var werr error
	for _, f := range frames {
		if werr = writeRows(bw, f, ew, eh); werr != nil {
			break
		}
	}
	if werr == nil {
		werr = bw.Flush()
	}
	cerr := stdin.Close()
	if werr == nil {
		werr = cerr
	}
	waitErr := cmd.Wait()
	if waitErr != nil || werr != nil {
		_ = os.Remove(path)
		if ctxErr := ctx.Err(); ctxErr != nil {
			return fmt.Errorf("sim: WriteMP4 %s: %w", path, ctxErr)
		}
		err := waitErr
		if err == nil {
			err = werr
		}
		if tail := stderr.String(); tail != "" {
			return fmt.Errorf("sim: WriteMP4 %s: ffmpeg: %w; stderr: %s", path, err, tail)
		}
		return fmt.Errorf("sim: WriteMP4 %s: ffmpeg: %w", path, err)
	}
	return nil
}

// Y4MHeader returns the YUV4MPEG2 stream header WriteY4M writes for w×h
// frames at fps (including the trailing newline), e.g.
// "YUV4MPEG2 W64 H64 F20:1 Ip A1:1 C420jpeg XCOLORRANGE=FULL\n".
func Y4MHeader(w, h int, fps float64) string {
	num, den := rationalFPS(fps)
	return fmt.Sprintf("YUV4MPEG2 W%d H%d F%d:%d Ip A1:1 C420jpeg XCOLORRANGE=FULL\n", w, h, num, den)
}

// WriteY4M writes frames as an uncompressed YUV4MPEG2 (.y4m) file in 4:2:0
// (the only layout Chromium's fake video capture accepts): the gray levels
// are stored unchanged as full-range luma and both chroma planes are the
// neutral value 128. Each frame is preceded by a bare "FRAME\n" marker.
// The frame rate in the header is fps as an exact or closely approximated
// rational (note that Chromium rounds it down to an integer).
func WriteY4M(path string, frames []*image.Gray, fps float64) (err error) {
	w, h, err := checkFrames(frames, fps)
	if err != nil {
		return fmt.Errorf("sim: WriteY4M %s: %w", path, err)
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("sim: WriteY4M: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("sim: WriteY4M: %w", cerr)
		}
		if err != nil {
			_ = os.Remove(path)
		}
	}()
	if err := writeY4M(f, w, h, frames, fps); err != nil {
		return fmt.Errorf("sim: WriteY4M %s: %w", path, err)
	}
	return nil
}

func writeY4M(out io.Writer, w, h int, frames []*image.Gray, fps float64) error {
	bw := bufio.NewWriterSize(out, 1<<16)
	if _, err := bw.WriteString(Y4MHeader(w, h, fps)); err != nil {
		return err
	}
	chroma := bytes.Repeat([]byte{128}, 2*((w+1)/2)*((h+1)/2))
	for _, f := range frames {
		if _, err := bw.WriteString("FRAME\n"); err != nil {
			return err
		}
		if err := writeRows(bw, f, 0, 0); err != nil {
			return err
		}
		if _, err := bw.Write(chroma); err != nil {
			return err
		}
	}
	return bw.Flush()
}
