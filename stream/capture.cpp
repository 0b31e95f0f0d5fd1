//go:build !nocv

#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include <opencv2/core.hpp>
#include <opencv2/videoio.hpp>

#include "capture.h"

static void copy_error(const char* msg, char* err, int errlen) {
    if (err == NULL || errlen <= 0) {
        return;
    }
    std::strncpy(err, msg, errlen - 1);
    err[errlen - 1] = '\0';
}

PhysdCapture physd_capture_new(void) {
    return new cv::VideoCapture();
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
