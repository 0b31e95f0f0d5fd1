//go:build !nocv

package stream

/*
#cgo !windows,!customenv pkg-config: opencv4
#cgo CXXFLAGS: --std=c++11
#cgo LDFLAGS: -ldl
#include <stdlib.h>
#include "capture.h"
*/
import "C"

import (
	"errors"
	"os"
	"sync"
	"unsafe"

	"gocv.io/x/gocv"
)

// OpenCV 4.6 constants (opencv2/videoio.hpp) that gocv v0.32.0 lacks.
const (
	capAPIFFmpeg        = int(gocv.VideoCaptureFFmpeg) // CAP_FFMPEG
	capAPIV4L2          = int(gocv.VideoCaptureV4L2)   // CAP_V4L2
	capPropOpenTimeout  = 53                           // CAP_PROP_OPEN_TIMEOUT_MSEC, open-only, FFmpeg backend
	capPropReadTimeout  = 54                           // CAP_PROP_READ_TIMEOUT_MSEC, open-only, FFmpeg backend
	ffmpegOptionsEnvVar = "OPENCV_FFMPEG_CAPTURE_OPTIONS"
)

// ffmpegEnv guards the process-wide environment variable
// OPENCV_FFMPEG_CAPTURE_OPTIONS. It is the package's only mutable
// package-level state, and it exists because OpenCV 4.6 offers no other way
// to pass FFmpeg demuxer options (such as rtsp_transport) to one capture:
// its FFmpeg backend reads the variable with getenv while a capture opens
// (and, when the variable is unset, asks FFmpeg to prefer TCP for RTSP).
// An open that needs its own options takes the write lock, sets the
// variable, opens and restores it; every other open takes the read lock, so
// getenv never races setenv. Timeouts, which OpenCV does take per capture
// (CAP_PROP_OPEN_TIMEOUT_MSEC, CAP_PROP_READ_TIMEOUT_MSEC), are passed as
// open parameters and need no lock. Opens are bounded by their open
// timeout, so a waiting open is delayed at most that long.
var ffmpegEnv sync.RWMutex

// captureSpec says what to open and how.
type captureSpec struct {
	uri    string // file path or URL; "" opens the device index
	index  int
	api    int
	params []int // property/value pairs for VideoCapture::open
	// ffmpegOptions, if not empty, is set as OPENCV_FFMPEG_CAPTURE_OPTIONS
	// for this open only ("key;value|key;value").
	ffmpegOptions string
}

// capture is a cv::VideoCapture opened with parameters. It is not safe for
// concurrent use: one goroutine reads and then closes it.
type capture struct {
	p C.PhysdCapture
}

// openCapture opens spec. On failure the error carries OpenCV's exception
// message if it threw, and the capture is released.
func openCapture(spec captureSpec) (*capture, error) {
	var errbuf [512]C.char
	p := C.physd_capture_new(&errbuf[0], C.int(len(errbuf)))
	if p == nil {
		return nil, errors.New(C.GoString(&errbuf[0]))
	}
	c := &capture{p: p}
	var curi *C.char
	if spec.uri != "" {
		curi = C.CString(spec.uri)
		defer C.free(unsafe.Pointer(curi))
	}
	var params *C.int
	if len(spec.params) > 0 {
		params = (*C.int)(C.malloc(C.size_t(len(spec.params)) * C.size_t(unsafe.Sizeof(C.int(0)))))
		defer C.free(unsafe.Pointer(params))
		ps := unsafe.Slice(params, len(spec.params))
		for i, v := range spec.params {
			ps[i] = C.int(v)
		}
	}
	open := func() C.int {
		return C.physd_capture_open(c.p, curi, C.int(spec.index), C.int(spec.api), params, C.int(len(spec.params)), &errbuf[0], C.int(len(errbuf)))
	}
	var ok C.int
	if spec.ffmpegOptions == "" {
		ffmpegEnv.RLock()
		ok = open()
		ffmpegEnv.RUnlock()
	} else {
		ffmpegEnv.Lock()
		old, had := os.LookupEnv(ffmpegOptionsEnvVar)
		opts := spec.ffmpegOptions
		if had && old != "" {
			opts = old + "|" + opts // later keys win in OpenCV's parser
		}
		err := os.Setenv(ffmpegOptionsEnvVar, opts)
		if err == nil {
			ok = open()
			if had {
				err = os.Setenv(ffmpegOptionsEnvVar, old)
			} else {
				err = os.Unsetenv(ffmpegOptionsEnvVar)
			}
		}
		ffmpegEnv.Unlock()
		if err != nil {
			c.Close()
			return nil, err
		}
	}
	if ok == 0 {
		msg := C.GoString(&errbuf[0])
		c.Close()
		if msg != "" {
			return nil, errors.New("OpenCV failed: " + msg)
		}
		return nil, errors.New("OpenCV could not open it")
	}
	return c, nil
}

// Read reads the next frame into m. It returns false when no frame could
// be read (end of stream, error or timeout).
func (c *capture) Read(m *gocv.Mat) bool {
	return C.physd_capture_read(c.p, unsafe.Pointer(m.Ptr())) == 1
}

// Get returns a property.
func (c *capture) Get(prop gocv.VideoCaptureProperties) float64 {
	return float64(C.physd_capture_get(c.p, C.int(prop)))
}

// Set sets a property and reports whether the backend accepted it.
func (c *capture) Set(prop gocv.VideoCaptureProperties, v float64) bool {
	return C.physd_capture_set(c.p, C.int(prop), C.double(v)) == 1
}

// Close releases the capture. It may be called more than once.
func (c *capture) Close() {
	if c.p != nil {
		C.physd_capture_free(c.p)
		c.p = nil
	}
}
