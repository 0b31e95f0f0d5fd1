#!/bin/sh
# leanbuild.sh [go build flags] PACKAGE: go build with OpenCV's core and
# imgproc linked and nothing else of it (make build, make deb).
#
# gocv's default cgo flags (pkg-config opencv4) link every OpenCV module,
# and Debian's libopencv_videoio pulls in 120 more libraries (GDAL,
# GStreamer, Qt, poppler, ...): 0.08 s of dynamic linking at every start
# and 25 MB of resident memory, for a reader physd uses only for V4L2 and
# odd files. With gocv's customenv tag the flags are ours: each C/C++
# function in its own section, the sections nothing calls dropped by the
# linker (gocv's wrappers of the modules physd does not use), and only
# core and imgproc on the link line. stream loads videoio itself on its
# first capture (stream/capture.cpp). The compiler and pkg-config are the
# caller's (CC, CXX, PKG_CONFIG_* for a cross build); GO_LDFLAGS adds
# linker flags (-X main.version=..., -s -w).
set -eu
GO=${GO:-go}
sections="-O2 -g -ffunction-sections -fdata-sections"
CGO_CPPFLAGS="$(pkg-config --cflags opencv4)" \
	CGO_LDFLAGS="-lopencv_imgproc -lopencv_core" \
	CGO_CFLAGS="$sections" CGO_CXXFLAGS="$sections" \
	exec $GO build -tags customenv -ldflags "${GO_LDFLAGS:-} -extldflags=-Wl,--gc-sections" "$@"
