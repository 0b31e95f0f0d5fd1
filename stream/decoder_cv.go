//go:build !nocv

package stream

/*
#cgo pkg-config: libavcodec libavutil
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <libavcodec/avcodec.h>
#include <libavutil/error.h>
#include <libavutil/frame.h>
#include <libavutil/log.h>
#include <libavutil/pixdesc.h>

// physd_dec is one libavcodec decoder and its reusable packet and frames.
typedef struct {
	AVCodecContext *ctx; // NULL after a failed reopen: opened on next use
	AVPacket *pkt;
	AVFrame *tmp; // receive target
	AVFrame *out; // the picture decoded by the last physd_dec_decode
	int job_err;  // first error returned by a job run through physd_execute2
	int fresh;    // d->ctx has decoded nothing since it was opened
	int codec;    // an AVCodecID: VP8, H.264 or HEVC
	int64_t max_pixels;
} physd_dec;

// physd_log_offset is the log level offset of physd's decoders; a message
// reaching the log callback at a level shifted by it comes from one of them.
#define PHYSD_LOG_OFFSET AV_LOG_DEBUG

// physd_log is the process's libav log callback. It passes every message
// on to libavutil's default callback, as before it was installed, and
// records an error logged by one of physd's decoders in that decoder's
// job_err: the H.265 decoder reports a picture whose reference is missing
// ("Could not find ref with POC") only there, decoding it against a gray
// stand-in.
static void physd_log(void *avcl, int level, const char *fmt, va_list vl) {
	if (avcl && level >= AV_LOG_PANIC + PHYSD_LOG_OFFSET && level <= AV_LOG_ERROR + PHYSD_LOG_OFFSET &&
			*(const AVClass **)avcl == avcodec_get_class()) {
		AVCodecContext *c = avcl;
		if (c->log_level_offset == PHYSD_LOG_OFFSET && c->opaque) {
			physd_dec *d = c->opaque;
			if (d->job_err == 0) d->job_err = AVERROR_INVALIDDATA;
		}
	}
	av_log_default_callback(avcl, level, fmt, vl);
}

static pthread_once_t physd_log_once = PTHREAD_ONCE_INIT;
static void physd_log_install(void) { av_log_set_callback(physd_log); }

// physd_execute2 replaces libavcodec's default (serial) job runner to keep
// the jobs' errors, which some decoders ignore: VP8 decodes macroblock rows
// as jobs, and a row that runs out of data (a truncated frame) fails there
// while the picture is still returned, its rest left undecoded.
static int physd_execute2(AVCodecContext *c, int (*func)(AVCodecContext *c2, void *arg, int jobnr, int threadnr),
		void *arg, int *ret, int count) {
	physd_dec *d = c->opaque;
	for (int i = 0; i < count; i++) {
		int r = func(c, arg, i, 0);
		if (ret) ret[i] = r;
		if (r < 0 && d->job_err == 0) d->job_err = r;
	}
	return 0;
}

// physd_dec_open (re)creates d->ctx: a single-threaded, low-delay decoder
// that fails on errors. It returns 0 or a negative AVERROR, leaving
// d->ctx NULL.
static int physd_dec_open(physd_dec *d) {
	avcodec_free_context(&d->ctx);
	const AVCodec *c = avcodec_find_decoder(d->codec);
	if (!c) return AVERROR_DECODER_NOT_FOUND;
	AVCodecContext *x = avcodec_alloc_context3(c);
	if (!x) return AVERROR(ENOMEM);
	x->opaque = d;
	// One thread: frame threading would delay output by a frame per
	// thread, and an edge board runs one decoder per camera anyway.
	x->thread_count = 1;
	// Output each picture as soon as it is decoded (no reorder delay), and
	// never output a picture the decoder knows to lack its references
	// (H.264 inter frames until an IDR).
	x->flags |= AV_CODEC_FLAG_LOW_DELAY;
	x->flags &= ~AV_CODEC_FLAG_OUTPUT_CORRUPT;
	// Fail on bitstream errors: a smeared picture would be measured as
	// motion.
	x->err_recognition = AV_EF_CRCCHECK | AV_EF_BITSTREAM | AV_EF_BUFFER | AV_EF_EXPLODE;
	// Error concealment stays on, although no concealed picture is ever
	// returned (physd_dec_decode rejects the decode_error_flags it sets),
	// because with it off libavcodec keeps no record of which macroblocks
	// the slices covered: H.264 then flags every slice but a picture's
	// first as following a lost one, rejecting all multi-slice pictures,
	// and passes a picture whose last slices are missing as clean.
	x->error_concealment = FF_EC_GUESS_MVS;
	// A corrupt or hostile header must not make us allocate gigabytes.
	x->max_pixels = d->max_pixels;
	// Errors reach the caller as return values; keep libavcodec's log of
	// each bad packet off stderr without touching the process-wide log
	// level (which OpenCV's FFmpeg backend manages).
	x->log_level_offset = PHYSD_LOG_OFFSET;
	int ret = avcodec_open2(x, c, NULL);
	if (ret < 0) {
		avcodec_free_context(&x);
		return ret;
	}
	// Set after opening, where threading setup would install its own
	// runner (it does not with one thread).
	x->execute2 = physd_execute2;
	d->ctx = x;
	d->fresh = 1;
	return 0;
}

// physd_dec_free frees everything d holds, and d. NULL is a no-op.
static void physd_dec_free(physd_dec *d) {
	if (!d) return;
	avcodec_free_context(&d->ctx);
	av_packet_free(&d->pkt);
	av_frame_free(&d->tmp);
	av_frame_free(&d->out);
	free(d);
}

// physd_dec_new returns in *out a decoder for codec, an AVCodecID. It
// returns 0 or a negative AVERROR, and on error leaves nothing allocated.
static int physd_dec_new(physd_dec **out, int codec, int64_t max_pixels) {
	*out = NULL;
	pthread_once(&physd_log_once, physd_log_install);
	physd_dec *d = calloc(1, sizeof *d);
	if (!d) return AVERROR(ENOMEM);
	d->codec = codec;
	d->max_pixels = max_pixels;
	d->pkt = av_packet_alloc();
	d->tmp = av_frame_alloc();
	d->out = av_frame_alloc();
	int ret = d->pkt && d->tmp && d->out ? physd_dec_open(d) : AVERROR(ENOMEM);
	if (ret < 0) {
		physd_dec_free(d);
		return ret;
	}
	*out = d;
	return 0;
}

// physd_dec_decode decodes one access unit (size > 0). It returns 1 when
// d->out holds a picture, 0 when the decoder produced none, or a negative
// AVERROR.
//
// The decoder is rebuilt, not flushed, after an error and before a key
// frame (key != 0), because libavcodec keeps state that neither a flush
// nor a key frame clears (measured: after a rejected H.264 slice, residual
// in the next IDR's picture and a stale FF_DECODE_ERROR_DECODE_SLICES flag
// on it; after an SPS asking for frame reordering, every later picture
// held back, IDRs included). A rebuilt H.264 decoder needs the SPS and PPS
// again, and a rebuilt H.265 decoder its VPS, SPS and PPS; the caller
// resends them (see sendAnnexB).
//
// pts travels with the packet; d->out->pts is the presentation time of the
// picture returned, which differs from the packet's when the stream
// reorders pictures (H.264 B-frames).
static int physd_dec_decode(physd_dec *d, const uint8_t *data, int size, int key, int64_t pts) {
	av_frame_unref(d->out);
	int ret = 0;
	if (!d->ctx || (key && !d->fresh)) ret = physd_dec_open(d);
	if (ret < 0) return ret;
	d->fresh = 0;
	// A packet of our own, because libavcodec's bitstream readers may read
	// up to AV_INPUT_BUFFER_PADDING_SIZE bytes past the end, which
	// av_new_packet allocates and zeroes.
	ret = av_new_packet(d->pkt, size);
	if (ret < 0) return ret;
	memcpy(d->pkt->data, data, size);
	d->pkt->pts = pts;
	d->job_err = 0;
	ret = avcodec_send_packet(d->ctx, d->pkt);
	av_packet_unref(d->pkt);
	int got = 0;
	// Drain every picture even after an error, so none is left to come out
	// with a later packet; keep the last one.
	for (;;) {
		int r = avcodec_receive_frame(d->ctx, d->tmp);
		if (r == AVERROR(EAGAIN) || r == AVERROR_EOF) break;
		if (r < 0) {
			if (ret >= 0) ret = r;
			break;
		}
		av_frame_unref(d->out);
		av_frame_move_ref(d->out, d->tmp);
		got = 1;
	}
	if (ret >= 0 && d->job_err < 0) ret = d->job_err;
	if (ret >= 0 && got && ((d->out->flags & AV_FRAME_FLAG_CORRUPT) || d->out->decode_error_flags)) {
		ret = AVERROR_INVALIDDATA;
	}
	if (ret < 0) {
		av_frame_unref(d->out);
		physd_dec_open(d); // on failure, retried by the next call
		return ret;
	}
	return got;
}

// physd_dec_luma_ok reports whether d->out's first plane is 8-bit luma,
// one byte per pixel, and at least as wide as the picture.
static int physd_dec_luma_ok(const physd_dec *d) {
	const AVFrame *f = d->out;
	const AVPixFmtDescriptor *p = av_pix_fmt_desc_get(f->format);
	if (!p || !f->data[0] || f->width <= 0 || f->height <= 0 || f->linesize[0] < f->width) return 0;
	if (p->flags & (AV_PIX_FMT_FLAG_BE | AV_PIX_FMT_FLAG_PAL | AV_PIX_FMT_FLAG_BITSTREAM |
			AV_PIX_FMT_FLAG_HWACCEL | AV_PIX_FMT_FLAG_RGB | AV_PIX_FMT_FLAG_FLOAT)) return 0;
	const AVComponentDescriptor *y = &p->comp[0];
	return y->plane == 0 && y->step == 1 && y->offset == 0 && y->shift == 0 && y->depth == 8;
}

// physd_dec_copy_luma copies d->out's luma, row by row (rows are linesize
// apart), into dst of width*height bytes.
static void physd_dec_copy_luma(const physd_dec *d, uint8_t *dst) {
	const AVFrame *f = d->out;
	for (int y = 0; y < f->height; y++) {
		memcpy(dst + (size_t)y * f->width, f->data[0] + (ptrdiff_t)y * f->linesize[0], f->width);
	}
}

// physd_dec_key reports whether d->out is intra coded: a key frame
// (libavcodec's key flag) or any other I picture.
static int physd_dec_key(const physd_dec *d) {
	const AVFrame *f = d->out;
#ifdef AV_FRAME_FLAG_KEY
	if (f->flags & AV_FRAME_FLAG_KEY) return 1;
#else
	if (f->key_frame) return 1;
#endif
	return f->pict_type == AV_PICTURE_TYPE_I;
}

// physd_dec_delay returns how many pictures the decoder may hold back
// for reordering, as the stream's parameter sets declare it (H.265:
// sps_max_num_reorder_pics), or 0 before any picture.
static int physd_dec_delay(const physd_dec *d) { return d->ctx ? d->ctx->has_b_frames : 0; }

// physd_averror_enomem is AVERROR(ENOMEM), a macro cgo cannot evaluate.
static int physd_averror_enomem(void) { return AVERROR(ENOMEM); }
*/
import "C"

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"
)

// maxDecodePixels bounds the picture size a decoder accepts (4096×4096,
// more than 4K UHD), so that a corrupt or hostile key frame header cannot
// make libavcodec allocate hundreds of megabytes.
const maxDecodePixels = 4096 * 4096

// maxPendingParams bounds the H.264 or H.265 parameter sets kept for the
// next access unit (VPS, SPS and PPS take tens of bytes; SEI can be
// larger).
const maxPendingParams = 64 << 10

// videoDecoder decodes one track's access units into 8-bit luma with
// libavcodec. Not safe for concurrent use.
type videoDecoder struct {
	codec videoCodec
	c     *C.physd_dec // nil once closed
	// H.264 and H.265 only:
	pending []byte    // parameter-set-only access units awaiting a slice
	params  [3][]byte // the parameter sets last decoded without error, by codec.paramSet
	buf     []byte    // scratch for assembling the packet
	// keepAtKeys keeps the libavcodec decoder across key frames while the
	// stream decodes without error (it is still rebuilt after an error).
	// RTSP cameras may reorder pictures (H.264 B-frames): a rebuild at an
	// IDR would drop the pictures held back for reordering. WebRTC tracks
	// never reorder, so they rebuild at every key frame.
	keepAtKeys bool
	pts        int64 // the presentation time of the packet being sent
	// reuseLuma makes every picture land in one buffer, valid until the
	// next decode: for a reader that is done with a picture once it has
	// preprocessed it (a 640×480 copy a frame is 9 MB/s of garbage).
	reuseLuma bool
	luma      []byte
}

// newVideoDecoder returns a decoder for pion's MIME type
// webrtc.MimeTypeVP8 ("video/VP8"), webrtc.MimeTypeH264 ("video/H264") or
// webrtc.MimeTypeH265 ("video/H265"), matched case-insensitively. Other types give an error wrapping
// ErrUnsupportedCodec. The caller must close the decoder.
func newVideoDecoder(mime string) (*videoDecoder, error) {
	codec, err := parseVideoMime(mime)
	if err != nil {
		return nil, err
	}
	id := C.int(C.AV_CODEC_ID_H264)
	switch codec {
	case codecVP8:
		id = C.AV_CODEC_ID_VP8
	case codecH265:
		id = C.AV_CODEC_ID_HEVC
	}
	var c *C.physd_dec
	if ret := C.physd_dec_new(&c, id, maxDecodePixels); ret < 0 {
		return nil, fmt.Errorf("stream: opening %v decoder: %s: %w", codec, avErr(ret), ErrUnsupportedCodec)
	}
	return &videoDecoder{codec: codec, c: c}, nil
}

// decode feeds one complete access unit: a whole VP8 frame, or an H.264
// or H.265 access unit in Annex-B form with in-band parameter sets (what
// pion's codecs.H264Packet and codecs.H265Depacketizer and samplebuilder
// produce). It returns
// the decoded picture's luma, w×h bytes tightly packed in a fresh slice
// the caller owns, or w == 0 when the decoder produced no picture for this
// input (e.g. H.264 inter frames before the first IDR). The size is that of
// each picture, so it follows resolution changes mid-stream. WebRTC
// senders do not reorder frames; a stream that does (B-frames) comes out
// late by its reorder depth.
//
// An access unit of parameter sets only (H.264 SPS, PPS, SEI, AUD; H.265
// VPS, SPS, PPS, AUD, prefix SEI; as when a sender gives them their own RTP
// timestamp) yields no picture and is decoded together with the next
// access unit, because libavcodec rejects a packet without a slice.
//
// An H.264 or H.265 picture may have any number of slices, all in au, in
// increasing order of their first macroblock or coding tree block.
//
// A corrupt, truncated or empty access unit, one whose references are
// missing, or an H.264 or H.265 picture missing slices or with slices
// repeated or out of order, gives an error wrapping ErrCorruptFrame; the decoder then
// starts afresh and produces pictures again from the next key frame (see
// isKeyFrame). Every key frame is decoded by a fresh libavcodec decoder,
// so nothing decoded before can affect it. What the bitstream cannot
// reveal goes undetected: an inter frame after a lost frame decodes
// against the wrong reference without error (VP8 has no frame numbers,
// and libavcodec fills H.264 frame_num gaps and H.265 missing references
// silently), and bytes that
// happen to parse make a picture. The caller must therefore skip to the
// next key frame after any RTP loss (pion's media.Sample.PrevDroppedPackets).
// A picture format other than 8-bit luma gives an error wrapping
// ErrUnsupportedCodec.
func (d *videoDecoder) decode(au []byte) (w, h int, luma []byte, err error) {
	w, h, luma, _, err = d.decodeAt(au, 0)
	return w, h, luma, err
}

// decodeAt is decode for an access unit presented at pts (any clock); it
// also returns the presentation time of the picture, which is not au's
// when the stream reorders pictures.
func (d *videoDecoder) decodeAt(au []byte, pts int64) (w, h int, luma []byte, picPTS int64, err error) {
	w, h, luma, err = d.decodeLuma(au, pts)
	if err != nil || w == 0 {
		return w, h, luma, 0, err
	}
	picPTS = int64(d.c.out.pts)
	if picPTS == int64(C.AV_NOPTS_VALUE) {
		picPTS = int64(d.c.out.best_effort_timestamp)
	}
	if picPTS == int64(C.AV_NOPTS_VALUE) {
		picPTS = pts
	}
	return w, h, luma, picPTS, nil
}

// decodeLuma implements decodeAt, but for the picture's presentation time.
func (d *videoDecoder) decodeLuma(au []byte, pts int64) (w, h int, luma []byte, err error) {
	if d == nil || d.c == nil {
		return 0, 0, nil, fmt.Errorf("stream: decode: decoder is closed: %w", ErrInvalidOption)
	}
	d.pts = pts
	if len(au) == 0 {
		// An empty packet would put libavcodec into draining mode.
		return d.corrupt("empty access unit")
	}
	if len(au) > math.MaxInt32-C.AV_INPUT_BUFFER_PADDING_SIZE-3*maxPendingParams { // room for pending, SPS and PPS
		return d.corrupt(fmt.Sprintf("access unit of %d bytes", len(au)))
	}
	var ret C.int
	if d.codec == codecH264 || d.codec == codecH265 {
		if d.codec.paramsOnly(au) {
			if len(d.pending)+len(au) > maxPendingParams {
				d.pending = d.pending[:0]
				return d.corrupt(fmt.Sprintf("over %d bytes of parameter sets without a slice", maxPendingParams))
			}
			d.pending = append(d.pending, au...)
			return 0, 0, nil, nil
		}
		if d.codec == codecH264 && !h264SlicesInOrder(au) {
			return d.corrupt("slices out of order or repeated")
		}
		ret = d.sendAnnexB(au)
	} else {
		key := codecVP8.isKeyFrame(au)
		if key {
			// libavcodec checks max_pixels too, but logs the refusal to
			// stderr, past the context's log level offset.
			w := int(binary.LittleEndian.Uint16(au[6:]) & 0x3fff)
			h := int(binary.LittleEndian.Uint16(au[8:]) & 0x3fff)
			if w*h > maxDecodePixels {
				return d.corrupt(fmt.Sprintf("%dx%d key frame, over %d pixels", w, h, maxDecodePixels))
			}
		}
		ret = d.send(au, key)
	}
	if ret < 0 {
		if ret == C.physd_averror_enomem() {
			return 0, 0, nil, fmt.Errorf("stream: %v decoder: %s", d.codec, avErr(ret))
		}
		return 0, 0, nil, fmt.Errorf("stream: %v decoder: %s: %w", d.codec, avErr(ret), ErrCorruptFrame)
	}
	if ret == 0 {
		if d.codec == codecH265 && C.physd_dec_delay(d.c) == 0 {
			// A stream that reorders nothing outputs each picture as it
			// is decoded. libavcodec's H.265 decoder returns none, and no
			// error, for a picture whose slices did not decode (measured:
			// a key frame cut in half); the pictures after it would then
			// decode against a reference that was never made.
			return d.corrupt("no picture from an access unit with a slice")
		}
		return 0, 0, nil, nil
	}
	if C.physd_dec_luma_ok(d.c) == 0 {
		name := C.GoString(C.av_get_pix_fmt_name(C.enum_AVPixelFormat(d.c.out.format)))
		return 0, 0, nil, fmt.Errorf("stream: %v decoder: picture format %q, want 8-bit luma: %w", d.codec, name, ErrUnsupportedCodec)
	}
	w, h = int(d.c.out.width), int(d.c.out.height)
	if d.reuseLuma {
		if cap(d.luma) < w*h {
			d.luma = make([]byte, w*h)
		}
		luma = d.luma[:w*h]
	} else {
		luma = make([]byte, w*h)
	}
	C.physd_dec_copy_luma(d.c, (*C.uint8_t)(unsafe.Pointer(&luma[0])))
	return w, h, luma, nil
}

// key reports whether the picture the last decode returned is intra
// coded (Frame.Key): an IDR or other I picture, a VP8 key frame. It is
// false when that decode returned no picture.
func (d *videoDecoder) key() bool {
	return d != nil && d.c != nil && d.c.out.data[0] != nil && C.physd_dec_key(d.c) != 0
}

// corrupt rebuilds the C decoder, as after a libavcodec error, so that it
// waits for a key frame, and returns an error wrapping ErrCorruptFrame.
func (d *videoDecoder) corrupt(why string) (w, h int, luma []byte, err error) {
	C.physd_dec_open(d.c) // on failure, retried by the next decode
	return 0, 0, nil, fmt.Errorf("stream: %v decoder: %s: %w", d.codec, why, ErrCorruptFrame)
}

// send decodes one non-empty packet at d.pts, key if it starts with a key
// frame (the C decoder is then rebuilt first, unless keepAtKeys): 1
// picture, 0 none, or a negative AVERROR (the C decoder was then rebuilt).
func (d *videoDecoder) send(pkt []byte, key bool) C.int {
	var k C.int
	if key && !d.keepAtKeys {
		k = 1
	}
	// libavcodec copies pkt into its own padded packet before returning,
	// so passing Go memory is fine.
	return C.physd_dec_decode(d.c, (*C.uint8_t)(unsafe.Pointer(&pkt[0])), C.int(len(pkt)), k, C.int64_t(d.pts))
}

// sendAnnexB decodes an H.264 or H.265 access unit that has a slice,
// after the pending parameter sets. When the C decoder is new (after an
// error) or about to be rebuilt (for a key frame) and au lacks one of the
// codec's parameter sets, the last good ones go first, so that a key
// frame sent without in-band parameter sets still decodes.
func (d *videoDecoder) sendAnnexB(au []byte) C.int {
	key := d.codec.isKeyFrame(au)
	n := d.codec.paramSets()
	var has [len(d.params)]bool
	forEachNAL(au, func(nal []byte) bool {
		if k := d.codec.paramSet(nal); k >= 0 {
			has[k] = true
		}
		return true
	})
	d.buf = d.buf[:0]
	if key || d.c.ctx == nil || d.c.fresh != 0 {
		for k := range n {
			if !has[k] {
				d.buf = append(d.buf, d.params[k]...)
			}
		}
	}
	skip := len(d.buf)
	pkt := append(append(d.buf, d.pending...), au...)
	d.buf, d.pending = pkt, d.pending[:0]
	ret := d.send(pkt, key)
	if ret < 0 && len(pkt) > len(au) {
		// Broken pending or remembered parameter sets must not cost an
		// access unit that decodes on its own.
		pkt, skip = au, 0
		ret = d.send(pkt, key)
	}
	if ret < 0 {
		return ret
	}
	var sets [len(d.params)][]byte
	forEachNAL(pkt[skip:], func(nal []byte) bool {
		if k := d.codec.paramSet(nal); k >= 0 {
			sets[k] = append(append(sets[k], 0, 0, 0, 1), nal...)
		}
		return true
	})
	for k, set := range sets[:n] {
		if set != nil && len(set) <= maxPendingParams {
			d.params[k] = set
		}
	}
	return ret
}

// close frees the decoder's C state. It is idempotent; decode fails after
// it.
func (d *videoDecoder) close() {
	if d == nil || d.c == nil {
		return
	}
	C.physd_dec_free(d.c)
	d.c = nil
	d.pending, d.params, d.buf = nil, [3][]byte{}, nil
}

// h264SlicesInOrder reports whether the slices (NAL types 1 and 5) of an
// Annex-B access unit start at increasing macroblocks, each picture or
// field at macroblock 0 (a slice whose header does not parse is left to
// libavcodec). libavcodec checks that a picture's slices covered all its
// macroblocks by counting them, so a repeated slice would make up for a
// missing one and let a partly undecoded picture through.
func h264SlicesInOrder(au []byte) bool {
	ok, prev := true, uint64(0)
	forEachNAL(au, func(nal []byte) bool {
		if t := nal[0] & 0x1f; t != 1 && t != 5 {
			return true
		}
		mb, parsed := h264FirstMB(nal[1:])
		if !parsed {
			return true
		}
		ok = mb == 0 || mb > prev
		prev = mb
		return ok
	})
	return ok
}

// h264FirstMB decodes first_mb_in_slice, the Exp-Golomb code that starts a
// slice header (b is the NAL unit after its header byte), skipping
// emulation prevention bytes. It reports false when b ends first or the
// code is longer than any 32-bit value's.
func h264FirstMB(b []byte) (uint64, bool) {
	var rbsp [8]byte // room for the longest code accepted, 63 bits
	n, zeros := 0, 0
	for _, c := range b {
		if n == len(rbsp) {
			break
		}
		if zeros >= 2 && c == 3 {
			zeros = 0
			continue
		}
		if c == 0 {
			zeros++
		} else {
			zeros = 0
		}
		rbsp[n] = c
		n++
	}
	bit := func(i int) uint64 { return uint64(rbsp[i/8]>>(7-i%8)) & 1 }
	lz := 0 // the code is lz zero bits, a one, then lz bits of value
	for lz < 8*n && bit(lz) == 0 {
		lz++
	}
	if lz > 31 || 2*lz+1 > 8*n {
		return 0, false
	}
	v := uint64(1)
	for i := lz + 1; i <= 2*lz; i++ {
		v = v<<1 | bit(i)
	}
	return v - 1, true
}

// avErr describes a libavcodec error code.
func avErr(code C.int) string {
	var buf [C.AV_ERROR_MAX_STRING_SIZE]C.char
	if C.av_strerror(code, &buf[0], C.size_t(len(buf))) < 0 {
		return fmt.Sprintf("libavcodec error %d", int(code))
	}
	return C.GoString(&buf[0])
}
