//go:build !nocv

// A minimal C interface to cv::VideoCapture that, unlike gocv v0.32.0,
// passes open-time parameters (CAP_PROP_OPEN_TIMEOUT_MSEC,
// CAP_PROP_READ_TIMEOUT_MSEC) to OpenCV 4.6's VideoCapture::open.
#ifndef PHYSD_CAPTURE_H
#define PHYSD_CAPTURE_H

#ifdef __cplusplus
extern "C" {
#endif

typedef void* PhysdCapture;

// physd_capture_new allocates an unopened capture, loading OpenCV's videoio
// on first use; NULL if it cannot, with the reason in err (errlen bytes,
// NUL-terminated).
PhysdCapture physd_capture_new(char* err, int errlen);
// physd_capture_open opens uri (or the device index when uri is NULL) with
// the API preference api and n ints of property/value pairs. It returns 1
// when the capture is open, 0 otherwise; if OpenCV threw, the exception's
// message is copied into err (errlen bytes, NUL-terminated).
int physd_capture_open(PhysdCapture c, const char* uri, int index, int api, const int* params, int n, char* err, int errlen);
// physd_capture_read reads the next frame into mat (a cv::Mat*): 1 on
// success, 0 when no frame could be read, -1 if OpenCV threw.
int physd_capture_read(PhysdCapture c, void* mat);
// physd_capture_get returns a property.
double physd_capture_get(PhysdCapture c, int prop);
// physd_capture_set sets a property; 1 if the backend accepted it.
int physd_capture_set(PhysdCapture c, int prop, double value);
// physd_capture_free releases and deletes the capture.
void physd_capture_free(PhysdCapture c);

#ifdef __cplusplus
}
#endif

#endif
