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

// Codec names the video encoder of an Encoding.
type Codec string

// The codecs WriteVideo can write, both through ffmpeg into an mp4 file.
const (
	// CodecH264 is H.264/AVC through libx264 (the empty Codec means it).
	CodecH264 Codec = "h264"
	// CodecH265 is H.265/HEVC through libx265, tagged hvc1.
	CodecH265 Codec = "h265"
)

// Encoding selects how WriteVideo compresses frames, as a camera stream
// would be: the codec, its quality and its keyframe interval. The zero
// Encoding is lossless H.264 with the encoder's default keyframes, what
// WriteMP4 writes.
type Encoding struct {
	// Codec is CodecH264 (or "") or CodecH265.
	Codec Codec `json:"codec"`
	// CRF is the constant rate factor, 1..51 (18 is visually lossless,
	// 30 a typical stream, 38 a low-bitrate substream); 0 (or less) is
	// lossless: libx264 -qp 0, libx265 lossless=1 (lossless luma).
	CRF int `json:"crf"`
	// GOP is the keyframe interval in frames: a keyframe exactly every GOP
	// frames and nowhere else (scene-cut detection off), as in a camera's
	// fixed "I-frame interval"; 0 keeps the encoder's default (x264 and
	// x265: at most 250 frames apart, plus scene cuts).
	GOP int `json:"gop"`
}

// ErrInvalidEncoding is wrapped by the errors of Encoding.Validate.
var ErrInvalidEncoding = errors.New("invalid encoding")

// MaxCRF is the largest Encoding.CRF, libx264's and libx265's limit.
const MaxCRF = 51

// Validate returns an error wrapping ErrInvalidEncoding that names the
// field when Codec is unknown, CRF is above MaxCRF or GOP is negative.
func (e Encoding) Validate() error {
	bad := func(field, format string, args ...any) error {
		return fmt.Errorf("sim: %w: Encoding.%s %s", ErrInvalidEncoding, field, fmt.Sprintf(format, args...))
	}
	switch e.Codec {
	case "", CodecH264, CodecH265:
	default:
		return bad("Codec", "is %q, want %q or %q", e.Codec, CodecH264, CodecH265)
	}
	if e.CRF > MaxCRF {
		return bad("CRF", "is %d, want 0 (lossless) to %d", e.CRF, MaxCRF)
	}
	if e.GOP < 0 {
		return bad("GOP", "is %d, want a keyframe interval ≥ 1 frame (or 0 for the encoder's default)", e.GOP)
	}
	return nil
}

// encoderName returns ffmpeg's name of the codec's encoder.
func (e Encoding) encoderName() string {
	if e.Codec == CodecH265 {
		return "libx265"
	}
	return "libx264"
}

// FFmpegArgs returns the ffmpeg command-line arguments WriteVideo uses to
// encode raw w×h gray frames read from stdin at fps into path with this
// encoding (w and h are the encoded size, even numbers). Both encoders run
// single-threaded with bit-exact flags, so the same frames give the same
// file. With GOP > 0, libx264 gets -g GOP -keyint_min GOP -sc_threshold 0
// and libx265 keyint=GOP:min-keyint=GOP:scenecut=0:open-gop=0.
func (e Encoding) FFmpegArgs(path string, w, h int, fps float64) []string {
	num, den := rationalFPS(fps)
	rate := strconv.FormatInt(num, 10) + "/" + strconv.FormatInt(den, 10)
	args := []string{
		"-hide_banner", "-nostdin", "-nostats", "-loglevel", "error", "-y",
		"-threads", "1", "-filter_threads", "1",
		"-f", "rawvideo", "-pix_fmt", "gray", "-s", fmt.Sprintf("%dx%d", w, h), "-r", rate,
		"-i", "-",
		"-sws_flags", "bicubic+accurate_rnd+full_chroma_int+bitexact",
		"-c:v", e.encoderName(), "-preset", "medium"}
	gop := strconv.Itoa(e.GOP)
	if e.Codec == CodecH265 {
		params := "log-level=error:pools=none:frame-threads=1"
		if e.CRF > 0 {
			args = append(args, "-crf", strconv.Itoa(e.CRF))
		} else {
			params += ":lossless=1"
		}
		if e.GOP > 0 {
			params += ":keyint=" + gop + ":min-keyint=" + gop + ":scenecut=0:open-gop=0"
		}
		args = append(args, "-pix_fmt", "yuv420p", "-threads", "1", "-tag:v", "hvc1", "-x265-params", params)
	} else {
		if e.CRF > 0 {
			args = append(args, "-crf", strconv.Itoa(e.CRF))
		} else {
			args = append(args, "-qp", "0") // lossless luma
		}
		args = append(args, "-pix_fmt", "yuv420p",
			"-threads", "1", "-x264-params", "threads=1:lookahead-threads=1:sliced-threads=0")
		if e.GOP > 0 {
			// x264 clamps keyint_min to GOP/2+1; with scene cuts off the
			// keyframes still fall exactly every GOP frames.
			args = append(args, "-g", gop, "-keyint_min", gop, "-sc_threshold", "0")
		}
	}
	return append(args,
		"-r", rate,
		"-flags:v", "+bitexact", "-fflags", "+bitexact", "-map_metadata", "-1",
		"-movflags", "+faststart",
		// The file: protocol keeps ffmpeg from reading a path that starts
		// with "-" as an option or one containing ":" as another protocol.
		"-f", "mp4", "file:"+path)
}

// FFmpegArgs returns the ffmpeg command-line arguments WriteMP4CRF uses to
// encode raw w×h gray frames read from stdin at fps into path (w and h are
// the encoded size, even numbers): Encoding{CRF: crf}.FFmpegArgs. It is
// exported so that callers can log or reproduce the exact encoding.
func FFmpegArgs(path string, w, h int, fps float64, crf int) []string {
	return Encoding{CRF: crf}.FFmpegArgs(path, w, h, fps)
}

// WriteMP4 encodes frames as lossless H.264 (libx264 -qp 0: lossless luma), as
// WriteMP4CRF with crf 0.
func WriteMP4(ctx context.Context, path string, frames []*image.Gray, fps float64) error {
	return WriteMP4CRF(ctx, path, frames, fps, 0)
}

// WriteMP4CRF encodes frames as H.264 (libx264, CRF crf, or lossless for
// crf ≤ 0; the encoder's default keyframes), as WriteVideo with
// Encoding{CRF: crf}.
func WriteMP4CRF(ctx context.Context, path string, frames []*image.Gray, fps float64, crf int) error {
	return writeVideo(ctx, "WriteMP4", path, frames, fps, Encoding{CRF: crf})
}

// WriteVideo encodes frames with enc (H.264 or H.265; yuv420p, one
// thread, bit-exact flags, faststart) in an mp4 file at path with the
// given frame rate, by piping the raw 8-bit gray frames into the ffmpeg
// command-line program (found on PATH). All frames must have the same
// size; an odd width or height is padded to the next even number by
// repeating the last column or row, because yuv420p needs even
// dimensions. Gray levels are stored in the usual limited (TV) range of
// yuv420p.
//
// An invalid enc gives an error wrapping ErrInvalidEncoding. If ffmpeg
// fails, the error includes the tail of its stderr and the partial output
// file is removed. If ffmpeg is not installed the error wraps
// exec.ErrNotFound; if it lacks the codec's encoder (libx265 is an
// optional part of ffmpeg builds), the error wraps ErrEncoderMissing.
func WriteVideo(ctx context.Context, path string, frames []*image.Gray, fps float64, enc Encoding) error {
	return writeVideo(ctx, "WriteVideo", path, frames, fps, enc)
}

// ErrEncoderMissing is wrapped by WriteVideo's error when the ffmpeg on
// PATH was built without the encoder the Encoding needs.
var ErrEncoderMissing = errors.New("ffmpeg lacks the encoder")

// encoders caches, per ffmpeg binary, the output of "ffmpeg -encoders".
var encoders sync.Map // bin → string

// hasEncoder reports whether the ffmpeg at bin lists the named encoder.
func hasEncoder(ctx context.Context, bin, name string) bool {
	list, ok := encoders.Load(bin)
	if !ok {
		out, err := exec.CommandContext(ctx, bin, "-hide_banner", "-nostdin", "-encoders").Output()
		if err != nil {
			return true // let the encoding itself report the problem
		}
		list, _ = encoders.LoadOrStore(bin, string(out))
	}
	for _, line := range strings.Split(list.(string), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[1] == name {
			return true
		}
	}
	return false
}

// writeVideo is WriteVideo with the caller's name (op) in its errors.
func writeVideo(ctx context.Context, op, path string, frames []*image.Gray, fps float64, enc Encoding) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := enc.Validate(); err != nil {
		return fmt.Errorf("sim: %s %s: %w", op, path, err)
	}
	w, h, err := checkFrames(frames, fps)
	if err != nil {
		return fmt.Errorf("sim: %s %s: %w", op, path, err)
	}
	p, err := startVideo(ctx, op, path, w, h, fps, enc)
	if err != nil {
		return err
	}
	var werr error
	for _, f := range frames {
		if werr = p.write(f); werr != nil {
			break
		}
	}
	return p.finish(werr)
}

// videoPipe is an ffmpeg encoder started by startVideo, reading raw gray
// frames on its stdin: the one encoder of WriteVideo and
// WriteStructureVideo, so that the same frames give the same file.
type videoPipe struct {
	ctx      context.Context
	op, path string
	cmd      *exec.Cmd
	stdin    io.WriteCloser
	bw       *bufio.Writer
	stderr   *tailBuffer
	ew, eh   int // encoded size, even
}

// startVideo starts ffmpeg encoding w×h frames at fps with a valid enc
// into path; op names the caller in errors.
func startVideo(ctx context.Context, op, path string, w, h int, fps float64, enc Encoding) (*videoPipe, error) {
	bin, err := exec.LookPath("ffmpeg")
	if err != nil {
		return nil, fmt.Errorf("sim: %s %s: ffmpeg not found: %w", op, path, err)
	}
	if enc.Codec == CodecH265 && !hasEncoder(ctx, bin, enc.encoderName()) {
		return nil, fmt.Errorf("sim: %s %s: %w: %s has no %s (H.265); install an ffmpeg built with libx265", op, path, ErrEncoderMissing, bin, enc.encoderName())
	}
	p := &videoPipe{ctx: ctx, op: op, path: path, stderr: &tailBuffer{max: 4096}, ew: w + w%2, eh: h + h%2}
	p.cmd = exec.CommandContext(ctx, bin, enc.FFmpegArgs(path, p.ew, p.eh, fps)...)
	p.cmd.Stderr = p.stderr
	p.cmd.Stdout = io.Discard
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		return nil, fmt.Errorf("sim: %s %s: %w", op, path, err)
	}
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("sim: %s %s: starting ffmpeg: %w", op, path, err)
	}
	p.bw = bufio.NewWriterSize(p.stdin, 1<<16)
	return p, nil
}

// write sends one frame, padded to the encoded size.
func (p *videoPipe) write(f *image.Gray) error { return writeRows(p.bw, f, p.ew, p.eh) }

// finish ends the input and waits for ffmpeg. If werr (the caller's
// error while writing) is not nil or ffmpeg fails, the partial file is
// removed and the error returned, with the tail of ffmpeg's stderr.
func (p *videoPipe) finish(werr error) error {
	if werr == nil {
		werr = p.bw.Flush()
	}
	cerr := p.stdin.Close()
	if werr == nil {
		werr = cerr
	}
	waitErr := p.cmd.Wait()
	if waitErr == nil && werr == nil {
		return nil
	}
	_ = os.Remove(p.path)
	if ctxErr := p.ctx.Err(); ctxErr != nil {
		return fmt.Errorf("sim: %s %s: %w", p.op, p.path, ctxErr)
	}
	err := waitErr
	if err == nil {
		err = werr
	}
	if tail := p.stderr.String(); tail != "" {
		return fmt.Errorf("sim: %s %s: ffmpeg: %w; stderr: %s", p.op, p.path, err, tail)
	}
	return fmt.Errorf("sim: %s %s: ffmpeg: %w", p.op, p.path, err)
}

// WriteStructureVideo renders the clip of s as RenderStructure does and
// encodes it as WriteVideo does, into the same bytes, but streams the
// frames into ffmpeg in order, a few batches of GOMAXPROCS frames at a
// time (one written while the next is rendered), so that memory stays
// bounded whatever the duration: the clip may have up to MaxStreamFrames
// frames instead of MaxClipPixels pixels. It returns the true
// displacement d_k in pixels of every frame.
//
// Errors are those of RenderStructure (an invalid s wraps
// ErrInvalidScene) and WriteVideo.
func WriteStructureVideo(ctx context.Context, path string, s Structure, enc Encoding) (d []float64, err error) {
	const op = "WriteStructureVideo"
	if ctx == nil {
		ctx = context.Background()
	}
	if err := s.validate(true); err != nil {
		return nil, err
	}
	if err := enc.Validate(); err != nil {
		return nil, fmt.Errorf("sim: %s %s: %w", op, path, err)
	}
	s = s.WithDefaults()
	d = s.Displacement(s.Times())
	r := newStructRender(s, d)
	bufs := r.scratch(len(d))
	batch := 2 * len(bufs)
	p, err := startVideo(ctx, op, path, s.W, s.H, s.FPS, enc)
	if err != nil {
		return nil, err
	}
	type rendered struct {
		frames []*image.Gray
		err    error
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The channel holds one batch: at most three are alive, the one being
	// written, the one waiting and the one being rendered.
	ch := make(chan rendered, 1)
	go func() {
		defer close(ch)
		for first := 0; first < len(d); first += batch {
			out := make([]*image.Gray, min(batch, len(d)-first))
			err := r.renderFrames(rctx, d, first, out, bufs)
			select {
			case ch <- rendered{out, err}:
			case <-rctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	var werr error
	for b := range ch {
		if werr = b.err; werr != nil {
			break
		}
		for _, f := range b.frames {
			if werr = p.write(f); werr != nil {
				break
			}
		}
		if werr != nil {
			break
		}
	}
	cancel()
	for range ch { // let the renderer finish before returning
	}
	if err := p.finish(werr); err != nil {
		return nil, err
	}
	return d, nil
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
