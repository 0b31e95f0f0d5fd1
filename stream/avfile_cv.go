//go:build !nocv

package stream

/*
#cgo pkg-config: libavformat libavcodec libavutil
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libavutil/display.h>
#include <libavutil/pixfmt.h>

// physd_file reads a video file with libavformat and libavcodec the way
// OpenCV 4.6's FFmpeg backend does (cap_ffmpeg_impl.hpp: open, grabFrame,
// getProperty), so that frame order, presentation times and the declared
// rate and count are the same as a cv::VideoCapture's, but hands over the
// decoded luma plane instead of converting every picture to BGR.
typedef struct {
	AVFormatContext *ic;
	AVCodecContext *ctx;
	AVPacket *pkt;
	AVFrame *pic;
	int vs;              // the first video stream, as OpenCV picks it
	int64_t picture_pts; // OpenCV's picture_pts of the last grab
	int64_t frame_number;
	int width, height;   // OpenCV's frame.width and frame.height
} physd_file;

enum { PHYSD_FILE_OK = 0, PHYSD_FILE_UNSUPPORTED = 1 };

// physd_file_luma reports whether a picture of format f has its luma in
// plane 0, 8 bits a sample (full is set for the formats swscale treats as
// full range).
static int physd_file_luma(int f, int *full) {
	switch (f) {
	case AV_PIX_FMT_YUVJ420P: case AV_PIX_FMT_YUVJ422P: case AV_PIX_FMT_YUVJ444P:
	case AV_PIX_FMT_YUVJ440P: case AV_PIX_FMT_YUVJ411P: case AV_PIX_FMT_GRAY8:
		*full = 1;
		return 1;
	case AV_PIX_FMT_YUV420P: case AV_PIX_FMT_YUV422P: case AV_PIX_FMT_YUV444P:
	case AV_PIX_FMT_YUV440P: case AV_PIX_FMT_YUV411P: case AV_PIX_FMT_YUV410P:
	case AV_PIX_FMT_NV12: case AV_PIX_FMT_NV21:
		*full = 0;
		return 1;
	}
	return 0;
}

static void physd_file_free(physd_file *f) {
	if (!f) return;
	av_frame_free(&f->pic);
	av_packet_free(&f->pkt);
	avcodec_free_context(&f->ctx);
	avformat_close_input(&f->ic);
	av_free(f);
}

// physd_file_open opens path and the decoder of its first video stream
// with threads threads (0: libavcodec's choice). It returns PHYSD_FILE_OK,
// PHYSD_FILE_UNSUPPORTED when the stream needs what only OpenCV's
// conversion does (a rotation in the display matrix, a pixel format whose
// luma is not 8-bit plane 0), or a negative AVERROR.
static int physd_file_open(const char *path, int threads, physd_file **out) {
	*out = NULL;
	physd_file *f = av_mallocz(sizeof *f);
	if (!f) return AVERROR(ENOMEM);
	f->vs = -1;
	f->picture_pts = AV_NOPTS_VALUE;
	int err = avformat_open_input(&f->ic, path, NULL, NULL);
	if (err < 0) goto fail;
	err = avformat_find_stream_info(f->ic, NULL);
	if (err < 0) goto fail;
	for (unsigned i = 0; i < f->ic->nb_streams; i++) {
		AVStream *st = f->ic->streams[i];
		AVCodecParameters *par = st->codecpar;
		if (par->codec_type != AVMEDIA_TYPE_VIDEO) continue;
		int full;
		if (!physd_file_luma(par->format, &full)) { err = PHYSD_FILE_UNSUPPORTED; goto fail; }
		const uint8_t *m = av_stream_get_side_data(st, AV_PKT_DATA_DISPLAYMATRIX, NULL);
		if (m) {
			long a = -lrint(av_display_rotation_get((const int32_t *)m));
			if (a < 0) a += 360;
			if (a == 90 || a == 180 || a == 270) { err = PHYSD_FILE_UNSUPPORTED; goto fail; }
		}
		const AVCodec *c = avcodec_find_decoder(par->codec_id);
		if (!c) { err = AVERROR_DECODER_NOT_FOUND; goto fail; }
		if (!(f->ctx = avcodec_alloc_context3(c))) { err = AVERROR(ENOMEM); goto fail; }
		f->ctx->thread_count = threads;
		if ((err = avcodec_parameters_to_context(f->ctx, par)) < 0) goto fail;
		if ((err = avcodec_open2(f->ctx, c, NULL)) < 0) goto fail;
		f->width = par->width ? par->width : f->ctx->width;
		f->height = par->height ? par->height : f->ctx->height;
		f->vs = i;
		break;
	}
	if (f->vs < 0) { err = AVERROR_STREAM_NOT_FOUND; goto fail; }
	if (!(f->pkt = av_packet_alloc()) || !(f->pic = av_frame_alloc())) { err = AVERROR(ENOMEM); goto fail; }
	*out = f;
	return PHYSD_FILE_OK;
fail:
	physd_file_free(f);
	return err;
}

// physd_file_grab decodes the next picture: OpenCV 4.6's grabFrame, step
// by step (the frame-count stop, 512 tolerated failures, the decoder
// flushed at the end of the file, a rejected packet ending the stream, and
// the presentation time taken from pts unless it is unset or 0), with one
// difference: OpenCV gives a picture a time only when it comes out of the
// decoder right after a packet went in, so with its frame threads (one a
// core) the last pictures, drained at the end of the file, read 0 ms and
// physd's clock extrapolates them; here every picture keeps its own.
static int physd_file_grab(physd_file *f) {
	AVStream *st = f->ic->streams[f->vs];
	if (st->nb_frames > 0 && f->frame_number > st->nb_frames) return 0;
	f->picture_pts = AV_NOPTS_VALUE;
	int errs = 0;
	int valid = avcodec_receive_frame(f->ctx, f->pic) >= 0;
	while (!valid) {
		av_packet_unref(f->pkt);
		int ret = av_read_frame(f->ic, f->pkt);
		if (ret == AVERROR(EAGAIN)) continue;
		if (ret == AVERROR_EOF) {
			f->pkt->data = NULL;
			f->pkt->size = 0;
			f->pkt->stream_index = f->vs;
		}
		if (f->pkt->stream_index != f->vs) {
			av_packet_unref(f->pkt);
			if (++errs > 512) break;
			continue;
		}
		if (avcodec_send_packet(f->ctx, f->pkt) < 0) break;
		ret = avcodec_receive_frame(f->ctx, f->pic);
		if (ret >= 0) valid = 1;
		else if (ret == AVERROR(EAGAIN)) continue;
		else if (++errs > 512) break;
	}
	if (valid) {
		int64_t pts = f->pic->pts;
		f->picture_pts = pts != AV_NOPTS_VALUE && pts != 0 ? pts : f->pic->pkt_dts;
		f->frame_number++;
	}
	return valid;
}

static double physd_r2d(AVRational r) { return r.num == 0 || r.den == 0 ? 0. : (double)r.num / (double)r.den; }

// physd_file_fps is OpenCV's get_fps.
static double physd_file_fps(physd_file *f) {
	AVStream *st = f->ic->streams[f->vs];
	double fps = physd_r2d(st->avg_frame_rate);
	if (fps < 0.000025) fps = 1.0 / physd_r2d(st->time_base);
	return fps;
}

// physd_file_count is OpenCV's get_total_frames.
static double physd_file_count(physd_file *f) {
	AVStream *st = f->ic->streams[f->vs];
	int64_t n = st->nb_frames;
	if (n == 0) {
		double sec = (double)f->ic->duration / (double)AV_TIME_BASE;
		if (sec < 0.000025) sec = (double)st->duration * physd_r2d(st->time_base);
		n = (int64_t)floor(sec * physd_file_fps(f) + 0.5);
	}
	return (double)n;
}

// physd_file_pos_msec is OpenCV's CAP_PROP_POS_MSEC: the last picture's
// time from the stream's start (its difference wraps as OpenCV's does).
static double physd_file_pos_msec(physd_file *f) {
	if (f->picture_pts == AV_NOPTS_VALUE) return 0;
	AVStream *st = f->ic->streams[f->vs];
	int64_t d = (int64_t)((uint64_t)f->picture_pts - (uint64_t)st->start_time);
	return (double)d * physd_r2d(st->time_base) * 1000;
}

// physd_file_key reports whether the last picture is intra coded: a key
// frame (libavcodec's key flag) or any other I picture. Either re-codes
// every block of the picture afresh.
static int physd_file_key(physd_file *f) {
	AVFrame *p = f->pic;
#ifdef AV_FRAME_FLAG_KEY
	if (p->flags & AV_FRAME_FLAG_KEY) return 1;
#else
	if (p->key_frame) return 1;
#endif
	return p->pict_type == AV_PICTURE_TYPE_I;
}

// physd_file_luma_of describes the last picture's luma plane: its data,
// stride and whether it is full range; 0 if the picture has none physd
// reads (a format change mid-stream).
static int physd_file_luma_of(physd_file *f, uint8_t **data, int *stride, int *w, int *h, int *full) {
	AVFrame *p = f->pic;
	if (!p->data[0] || !physd_file_luma(p->format, full)) return 0;
	*data = p->data[0];
	*stride = p->linesize[0];
	*w = f->width < p->width ? f->width : p->width;
	*h = f->height < p->height ? f->height : p->height;
	return *stride >= *w && *w > 0 && *h > 0;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"image"
	"unsafe"

	"gocv.io/x/gocv"
)

// errNeedsOpenCV says a file is readable but only through OpenCV's own
// conversion (see physd_file_open).
var errNeedsOpenCV = errors.New("needs OpenCV's conversion")

// avFile is a video file read by libavformat and libavcodec with OpenCV's
// semantics, handing over the luma plane. Not safe for concurrent use.
type avFile struct {
	p *C.physd_file
}

// openAVFile opens path. Errors wrap errNeedsOpenCV or are libav's.
//
// It decodes on one thread: frame threads cost more CPU than they save
// wall time here, where a reader goroutine already decodes ahead of the
// preprocessing (BenchmarkReadFile on 2 cores: 1 thread 0.15–0.20 s a
// read, 2 threads 0.18–0.25 s, libavcodec's choice 0.21–0.24 s, and
// 30–60 % more CPU), and a board replays several cameras at once.
func openAVFile(path string) (*avFile, error) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var p *C.physd_file
	switch ret := C.physd_file_open(cpath, 1, &p); {
	case ret == C.PHYSD_FILE_UNSUPPORTED:
		return nil, errNeedsOpenCV
	case ret < 0:
		return nil, fmt.Errorf("libavformat: %s", avErr(ret))
	}
	return &avFile{p: p}, nil
}

// read decodes the next frame into pic as a copy of its luma plane. It
// returns false at the end of the file or when decoding failed; a frame
// without a luma plane physd reads leaves pic empty.
func (f *avFile) read(pic *picture) bool {
	if C.physd_file_grab(f.p) != 1 {
		return false
	}
	pic.luma = false
	pic.key, pic.keyKnown = C.physd_file_key(f.p) != 0, true
	var data *C.uint8_t
	var stride, w, h, full C.int
	if C.physd_file_luma_of(f.p, &data, &stride, &w, &h, &full) != 1 {
		return true
	}
	W, H, S := int(w), int(h), int(stride)
	if pic.gray == nil || pic.gray.Rect.Dx() != W || pic.gray.Rect.Dy() != H {
		pic.gray = image.NewGray(image.Rect(0, 0, W, H))
	}
	src := unsafe.Slice((*byte)(unsafe.Pointer(data)), S*(H-1)+W)
	for y := range H {
		copy(pic.gray.Pix[y*W:(y+1)*W], src[y*S:y*S+W])
	}
	pic.luma, pic.lv = true, pic.video
	if full != 0 {
		pic.lv = nil
	}
	return true
}

// get returns what OpenCV's capture would for the properties a decoder
// asks for (0 for any other).
func (f *avFile) get(prop gocv.VideoCaptureProperties) float64 {
	switch prop {
	case gocv.VideoCapturePosMsec:
		return float64(C.physd_file_pos_msec(f.p))
	case gocv.VideoCaptureFPS:
		return float64(C.physd_file_fps(f.p))
	case gocv.VideoCaptureFrameCount:
		return float64(C.physd_file_count(f.p))
	case gocv.VideoCaptureFrameWidth:
		return float64(f.p.width)
	case gocv.VideoCaptureFrameHeight:
		return float64(f.p.height)
	}
	return 0
}

// Close releases the file. It may be called more than once.
func (f *avFile) Close() {
	if f.p != nil {
		C.physd_file_free(f.p)
		f.p = nil
	}
}
