//go:build !nocv

// See load_videoio: no call here may become a direct one.
#pragma GCC optimize("no-devirtualize", "no-devirtualize-speculatively")

#include <cstdio>
#include <cstring>
#include <exception>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include <dlfcn.h>

#include <opencv2/core.hpp>
#include <opencv2/videoio.hpp>

#include "capture.h"

// OpenCV's videoio is loaded on the first capture, not at start: with its
// backends (GStreamer, GDAL through imgcodecs, ...) it maps some 120 more
// libraries, ≈ 25 MB of resident memory and most of the start-up time,
// and physd reads files, RTSP and WebRTC without it. Only the constructor
// is looked up by name; every other member used here is virtual, called
// through the object's vtable (devirtualisation is off for this file, above,
// so the compiler emits no direct reference that would make the linker pull
// the library in at start).
namespace {

typedef void (*ctor_fn)(void*);

std::once_flag videoio_once;
ctor_fn videoio_ctor = nullptr;
char videoio_err[512];

void load_videoio() {
    char name[64];
    std::snprintf(name, sizeof name, "libopencv_videoio.so.%d%02d", CV_VERSION_MAJOR, CV_VERSION_MINOR);
    void* h = dlopen(name, RTLD_NOW | RTLD_GLOBAL);
    if (h == NULL) {
        std::snprintf(videoio_err, sizeof videoio_err, "OpenCV's videoio (%s) cannot be loaded: %s", name, dlerror());
        return;
    }
    // cv::VideoCapture::VideoCapture() (Itanium C++ ABI, complete-object constructor).
    videoio_ctor = reinterpret_cast<ctor_fn>(dlsym(h, "_ZN2cv12VideoCaptureC1Ev"));
    if (videoio_ctor == NULL) {
        std::snprintf(videoio_err, sizeof videoio_err, "OpenCV's videoio (%s) has no cv::VideoCapture constructor: %s", name, dlerror());
    }
}

}  // namespace

static void copy_error(const char* msg, char* err, int errlen) {
    if (err == NULL || errlen <= 0) {
        return;
    }
    std::strncpy(err, msg, errlen - 1);
    err[errlen - 1] = '\0';
}

PhysdCapture physd_capture_new(char* err, int errlen) {
    std::call_once(videoio_once, load_videoio);
    if (videoio_ctor == NULL) {
        copy_error(videoio_err, err, errlen);
        return NULL;
    }
    void* mem = ::operator new(sizeof(cv::VideoCapture), std::nothrow);
    if (mem == NULL) {
        copy_error("out of memory", err, errlen);
        return NULL;
    }
    try {
        videoio_ctor(mem);
    } catch (const std::exception& e) {
        ::operator delete(mem);
        copy_error(e.what(), err, errlen);
        return NULL;
    }
    return mem;
}

int physd_capture_open(PhysdCapture c, const char* uri, int index, int api, const int* params, int n, char* err, int errlen) {
    cv::VideoCapture* vc = static_cast<cv::VideoCapture*>(c);
    std::vector<int> p(params, params + n);
    try {
        bool ok = uri != NULL ? vc->open(std::string(uri), api, p) : vc->open(index, api, p);
        return ok && vc->isOpened() ? 1 : 0;
    } catch (const std::exception& e) {
        copy_error(e.what(), err, errlen);
    } catch (...) {
        copy_error("unknown C++ exception", err, errlen);
    }
    return 0;
}

int physd_capture_read(PhysdCapture c, void* mat) {
    try {
        return static_cast<cv::VideoCapture*>(c)->read(*static_cast<cv::Mat*>(mat)) ? 1 : 0;
    } catch (...) {
        return -1;
    }
}

double physd_capture_get(PhysdCapture c, int prop) {
    try {
        return static_cast<cv::VideoCapture*>(c)->get(prop);
    } catch (...) {
        return 0;
    }
}

int physd_capture_set(PhysdCapture c, int prop, double value) {
    try {
        return static_cast<cv::VideoCapture*>(c)->set(prop, value) ? 1 : 0;
    } catch (...) {
        return 0;
    }
}

void physd_capture_free(PhysdCapture c) {
    cv::VideoCapture* vc = static_cast<cv::VideoCapture*>(c);
    try {
        vc->release();
    } catch (...) {
    }
    delete vc;
}
