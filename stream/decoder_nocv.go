//go:build nocv

package stream

import "fmt"

// videoDecoder would decode a WebRTC track with libavcodec; this build has
// no cgo video stack (tag nocv), so it cannot be created.
type videoDecoder struct{ keepAtKeys, reuseLuma bool }

// newVideoDecoder returns an error wrapping ErrUnsupportedCodec for a MIME
// type other than VP8 or H.264, and otherwise one wrapping ErrNoOpenCV:
// the nocv build links neither OpenCV nor libavcodec.
func newVideoDecoder(mime string) (*videoDecoder, error) {
	codec, err := parseVideoMime(mime)
	if err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("stream: %v decoder needs libavcodec: %w", codec, ErrNoOpenCV)
}

// decode is never reached, since newVideoDecoder fails; it returns an
// error wrapping ErrNoOpenCV.
func (d *videoDecoder) decode([]byte) (w, h int, luma []byte, err error) {
	return 0, 0, nil, fmt.Errorf("stream: video decoder: %w", ErrNoOpenCV)
}

// close does nothing.
func (d *videoDecoder) close() {}

// decodeAt is never reached either; see decode.
func (d *videoDecoder) decodeAt([]byte, int64) (w, h int, luma []byte, pts int64, err error) {
	return 0, 0, nil, 0, fmt.Errorf("stream: video decoder: %w", ErrNoOpenCV)
}

// key is never reached either; it reports false.
func (d *videoDecoder) key() bool { return false }
