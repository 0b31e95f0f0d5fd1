package stream

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Defaults of the live sources.
const (
	// DefaultStallTimeout is the Timeout of RTSPOptions and V4L2Options
	// when they are 0.
	DefaultStallTimeout = 5 * time.Second
	// DefaultOpenTimeout is RTSPOptions.OpenTimeout when it is 0.
	DefaultOpenTimeout = 10 * time.Second
	// minLiveTimeout bounds the timeouts from below.
	minLiveTimeout = 100 * time.Millisecond
	// maxLiveTimeout bounds the timeouts from above (OpenCV takes them as
	// int milliseconds).
	maxLiveTimeout = 24 * time.Hour
	// watchdogGrace is how much longer than a timeout Run waits before
	// giving up on a read that OpenCV's own timeout failed to end.
	watchdogGrace = 2 * time.Second
	// stallFraction: a read that fails after at least this fraction of the
	// stall timeout failed because of the timeout.
	stallFraction = 0.9
)

// RTSP transports (RTSPOptions.Transport).
const (
	// TransportTCP interleaves RTP in the RTSP TCP connection (the default).
	TransportTCP = "tcp"
	// TransportUDP receives RTP over UDP.
	TransportUDP = "udp"
)

// RTSPOptions configures an RTSPSource.
type RTSPOptions struct {
	Preprocess
	// Transport is TransportTCP (default, also for "") or TransportUDP.
	// The native client uses it as given. For streams read by OpenCV, TCP
	// leaves OpenCV's own setting, which asks FFmpeg to prefer
	// interleaved TCP; UDP must be set through the process-wide
	// OPENCV_FFMPEG_CAPTURE_OPTIONS variable, which this package sets only
	// for the duration of the open, under a lock (see the package
	// documentation). If the variable is already set in the environment,
	// its options are kept and rtsp_transport is added for TCP as well.
	Transport string
	// Timeout is how long the stream may deliver no frame before Run
	// returns an error wrapping ErrStalled (0 = DefaultStallTimeout). It is
	// passed to OpenCV as CAP_PROP_READ_TIMEOUT_MSEC, so a hung server can
	// not block a read for FFmpeg's default 30 s.
	Timeout time.Duration
	// OpenTimeout bounds connecting, DESCRIBE/SETUP/PLAY and probing the
	// stream (0 = DefaultOpenTimeout); CAP_PROP_OPEN_TIMEOUT_MSEC.
	OpenTimeout time.Duration
	// TLS is how an rtsps:// camera's certificate is checked (the zero
	// value: the system's roots and the URL's host name).
	TLS CameraTLS
	// Tap, when set, is handed each access unit the decoder accepted, in
	// decoding order, from the source's goroutine (it must not block):
	// an alert's evidence is cut from them (package evidence).
	Tap func(AccessUnit)
}

// RTSPSource reads an RTSP camera. H.264, H.265 and VP8 streams are
// received by a gortsplib client and decoded by libavcodec, as WebRTC
// tracks are: an access unit that does not decode is skipped with the
// frames that depend on it, counted in DecodeErrors, and marked by a jump
// in Seq, as is a frame that lost RTP packets; pictures keep their size
// when the camera changes it mid-stream. (libavcodec 5.1's H.265 decoder
// does not notice a slice damaged inside its data or a picture missing a
// slice other than its first; over RTP such damage comes from lost
// packets, which the jitter buffer sees.)
// MJPEG over rtsp:// goes through the same client, each picture decoded on
// its own by image/jpeg, with the same counting and sizes. Over rtsps://
// the client checks the camera's certificate as RTSPOptions.TLS says, and
// a refused certificate ends Run with an error wrapping ErrUntrusted that
// names its fingerprint.
// Other streams (MPEG-4, AV1, H.265 with sprop-max-don-diff) are read
// through OpenCV's FFmpeg backend, which
// conceals corrupt frames, keeps the first picture size and checks no
// certificate: over rtsps:// physd reads them only with
// TLS.InsecureSkipVerify, and otherwise fails with ErrUntrusted. Frame times
// are presentation times from the RTP timestamps, rebased so that the
// first frame has Time 0; Wall is the arrival time of the first frame
// plus Time. There is no reconnection inside the source: when
// the stream stalls, ends or fails, Run returns, and the caller decides
// whether to call Run again. It is immutable after construction.
type RTSPSource struct {
	url  string
	name string
	opt  RTSPOptions
	// decodeErrs counts access units the native client's decoder
	// rejected, over every Run.
	decodeErrs atomic.Int64
	// sessions counts Run's sessions, for AccessUnit.Session.
	sessions atomic.Int64
}

// DecodeErrors returns how many access units were rejected as corrupt or
// undecodable since the source was created (H.264, H.265, VP8 and MJPEG
// streams; OpenCV conceals the errors of other streams, which count 0).
func (s *RTSPSource) DecodeErrors() int64 { return s.decodeErrs.Load() }

// NewRTSPSource checks the URL (rtsp:// or rtsps:// with a host) and the
// options; it does not connect. Errors name the URL without credentials
// and wrap ErrInvalidOption, or ErrNoOpenCV in a nocv build.
func NewRTSPSource(rawURL string, opt RTSPOptions) (*RTSPSource, error) {
	s := &RTSPSource{url: rawURL, name: redactURL(rawURL)}
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, s.wrap(fmt.Errorf("not a URL: %w", ErrInvalidOption)) // err may echo the password
	}
	if u.Scheme != "rtsp" && u.Scheme != "rtsps" {
		return nil, s.wrap(fmt.Errorf("scheme %q: want rtsp or rtsps: %w", u.Scheme, ErrInvalidOption))
	}
	if u.Hostname() == "" {
		return nil, s.wrap(fmt.Errorf("no host: %w", ErrInvalidOption))
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n <= 0 || n > 65535 {
			return nil, s.wrap(fmt.Errorf("port %q: %w", p, ErrInvalidOption))
		}
	}
	switch strings.ToLower(opt.Transport) {
	case "", TransportTCP:
		opt.Transport = TransportTCP
	case TransportUDP:
		opt.Transport = TransportUDP
	default:
		return nil, s.wrap(fmt.Errorf("option Transport = %q: want %q or %q: %w", opt.Transport, TransportTCP, TransportUDP, ErrInvalidOption))
	}
	if opt.Timeout, err = liveTimeout("Timeout", opt.Timeout, DefaultStallTimeout); err != nil {
		return nil, s.wrap(err)
	}
	if opt.OpenTimeout, err = liveTimeout("OpenTimeout", opt.OpenTimeout, DefaultOpenTimeout); err != nil {
		return nil, s.wrap(err)
	}
	if err := opt.Preprocess.Validate(); err != nil {
		return nil, s.wrap(err)
	}
	if !haveOpenCV {
		return nil, s.wrap(ErrNoOpenCV)
	}
	s.opt = opt
	return s, nil
}

// Name returns the URL without userinfo (and with credential-like query
// values redacted), e.g. "rtsp://camera.local:554/stream1".
func (s *RTSPSource) Name() string { return s.name }

// Options returns the options with defaults applied.
func (s *RTSPSource) Options() RTSPOptions { return s.opt }

func (s *RTSPSource) wrap(err error) error { return fmt.Errorf("stream: %s: %w", s.name, err) }

// Run connects and emits frames until ctx is done (ctx.Err()), emit fails
// (its error), or the stream fails: no frame for Timeout (an error
// wrapping ErrStalled, also when opening takes longer than OpenTimeout),
// the server cannot be reached or refuses the stream (ErrUnavailable), or
// the stream ends (an error wrapping io.EOF). Errors name the source.
func (s *RTSPSource) Run(ctx context.Context, emit func(Frame) error) error {
	return s.run(ctx, emit)
}

// scrub removes the URL and its password from a message that may quote
// them (OpenCV's exception messages).
func (s *RTSPSource) scrub(msg string) string {
	msg = strings.ReplaceAll(msg, s.url, s.name)
	if u, err := url.Parse(s.url); err == nil && u.User != nil {
		if pw, ok := u.User.Password(); ok && pw != "" {
			msg = strings.ReplaceAll(msg, pw, "REDACTED")
		}
	}
	return msg
}

// V4L2Options configures a V4L2Source.
type V4L2Options struct {
	Preprocess
	// Width, Height and FPS request a capture format from the driver; 0
	// keeps the driver's. The driver may pick the nearest it supports.
	Width, Height int
	FPS           float64
	// Timeout is how long the camera may deliver no frame before Run
	// returns an error wrapping ErrStalled (0 = DefaultStallTimeout).
	Timeout time.Duration
}

// V4L2Source reads a local camera through OpenCV's V4L2 backend. Frame
// times are the driver's buffer timestamps (CAP_PROP_POS_MSEC) rebased to
// 0 at the first frame, with the repairs of the package documentation;
// Wall is the arrival time of the first frame plus Time. It is immutable
// after construction.
type V4L2Source struct {
	device string // as given
	path   string // device node
	index  int    // device index, or -1 when given by path
	opt    V4L2Options
}

// NewV4L2Source checks the device name — an index such as "0" (meaning
// /dev/video0) or a path such as "/dev/video0" — and the options; it does
// not open the device, which may appear later. Errors name the device and
// wrap ErrInvalidOption, or ErrNoOpenCV in a nocv build.
func NewV4L2Source(device string, opt V4L2Options) (*V4L2Source, error) {
	s := &V4L2Source{device: device, index: -1, path: device}
	if n, err := strconv.Atoi(device); err == nil {
		if n < 0 || n > 1<<16 {
			return nil, s.wrap(fmt.Errorf("device index %d: %w", n, ErrInvalidOption))
		}
		s.index, s.path = n, "/dev/video"+device
	} else if !strings.HasPrefix(device, "/") {
		return nil, s.wrap(fmt.Errorf("want a device index such as 0 or a path such as /dev/video0: %w", ErrInvalidOption))
	}
	if opt.Width < 0 || opt.Height < 0 || opt.Width > 1<<16 || opt.Height > 1<<16 {
		return nil, s.wrap(fmt.Errorf("Width×Height = %d×%d: %w", opt.Width, opt.Height, ErrInvalidOption))
	}
	if !(opt.FPS == 0 || opt.FPS >= MinFPS && opt.FPS <= 1e4) {
		return nil, s.wrap(fmt.Errorf("FPS = %v: %w", opt.FPS, ErrInvalidOption))
	}
	var err error
	if opt.Timeout, err = liveTimeout("Timeout", opt.Timeout, DefaultStallTimeout); err != nil {
		return nil, s.wrap(err)
	}
	if err := opt.Preprocess.Validate(); err != nil {
		return nil, s.wrap(err)
	}
	if !haveOpenCV {
		return nil, s.wrap(ErrNoOpenCV)
	}
	s.opt = opt
	return s, nil
}

// Name returns "v4l2:" followed by the device node, e.g. "v4l2:/dev/video0".
func (s *V4L2Source) Name() string { return "v4l2:" + s.path }

func (s *V4L2Source) wrap(err error) error { return fmt.Errorf("stream: %s: %w", s.Name(), err) }

// Run opens the camera and emits frames until ctx is done (ctx.Err()),
// emit fails (its error), or the camera fails: missing or busy
// (ErrUnavailable, and fs.ErrNotExist for a missing device node), or no
// frame for Timeout (ErrStalled). Errors name the device.
func (s *V4L2Source) Run(ctx context.Context, emit func(Frame) error) error {
	return s.run(ctx, emit)
}

// liveTimeout applies the default and checks a timeout option.
func liveTimeout(field string, d, def time.Duration) (time.Duration, error) {
	if d == 0 {
		return def, nil
	}
	if d < minLiveTimeout || d > maxLiveTimeout {
		return 0, fmt.Errorf("%s = %v: must be in [%v, %v] (0 = %v): %w", field, d, minLiveTimeout, maxLiveTimeout, def, ErrInvalidOption)
	}
	return d, nil
}
