package daemon

import (
	"fmt"

	"github.com/physd/physd/config"
	"github.com/physd/physd/estimator"
	"github.com/physd/physd/sim"
	"github.com/physd/physd/simcam"
	"github.com/physd/physd/stream"
)

// newSource builds the camera's frame source with its preprocessing: the
// region of interest, grayscale, resize to the camera's size (default:
// the preset's) and optional binarisation. thumb (may be nil) keeps a
// small copy of the whole frame for the dashboard. tap (may be nil) is
// handed a compressed source's access units (alerts' evidence).
func newSource(cc config.Camera, pre stream.Preprocess, rtc *stream.WebRTC, tap func(stream.AccessUnit)) (stream.Source, error) {
	s := cc.Source
	var src stream.Source
	var err error
	switch s.Kind {
	case config.KindSynthetic:
		y := s.Synthetic
		src, err = simcam.New(simcam.Options{System: sim.System(y.System), Regime: sim.Regime(y.Regime), Gamma1: -1, Gamma0: -1,
			Z0: y.Z0, V0: y.V0, EventEvery: y.EventEvery, FPS: y.FPS, Size: y.Size, Seed: y.Seed, Realtime: y.Realtime}, pre)
	case config.KindFile:
		src, err = stream.NewFileSource(s.Path, stream.FileSourceOptions{Preprocess: pre, FPS: cc.FPS, Realtime: s.Realtime, Loop: s.Loop})
	case config.KindRTSP:
		var ct stream.CameraTLS
		if ct, err = cameraTLS(s.TLS); err != nil {
			return nil, fmt.Errorf("camera %s: source.%w", cc.Name, err)
		}
		src, err = stream.NewRTSPSource(s.URL.Value(), stream.RTSPOptions{Preprocess: pre, Transport: s.Transport, Timeout: s.Timeout, OpenTimeout: s.Timeout, TLS: ct, Tap: tap})
	case config.KindV4L2:
		src, err = stream.NewV4L2Source(s.Device, stream.V4L2Options{Preprocess: pre, FPS: cc.FPS, Timeout: s.Timeout})
	case config.KindWHIP:
		src, err = stream.NewWHIPSource(cc.Name, rtc, stream.WHIPOptions{Preprocess: pre, Silence: s.Timeout, Exclusive: s.Exclusive, Tap: tap})
	case config.KindWHEP:
		src, err = stream.NewWHEPSource(s.URL.Value(), rtc, stream.WHEPOptions{Preprocess: pre, Token: s.Token.Value(), Silence: s.Timeout, Tap: tap})
	default:
		return nil, fmt.Errorf("camera %s: source kind %q is not supported", cc.Name, s.Kind)
	}
	if err != nil {
		return nil, fmt.Errorf("camera %s: %w", cc.Name, err)
	}
	return src, nil
}

// cameraPre is how a camera (or a zone, as config.Camera.ZoneCamera
// gives it) reads its frames: its region, its size (the preset's when
// 0), its reference region, binarised when either asks. A camera with
// zones reads whole gray frames instead (zonesPre).
func cameraPre(cc config.Camera, p estimator.Preset, thumb *stream.Thumbnailer) stream.Preprocess {
	size := cc.Size
	if size == 0 {
		size = p.Size
	}
	return stream.Preprocess{ROI: stream.ROI(cc.ROI), Size: size, Reference: stream.ROI(cc.Reference),
		Binarize: cc.Binarize || p.Binarize, Thumb: thumb}
}

// zonesPre is how a camera with zones reads its frames: whole, in gray,
// once, for every zone to cut its own from.
func zonesPre(thumb *stream.Thumbnailer) stream.Preprocess {
	return stream.Preprocess{Gray: true, Thumb: thumb}
}

// cameraTLS turns the configured certificate check of an rtsps:// camera
// into the stream package's, reading the CA bundle; errors name the key.
func cameraTLS(t config.SourceTLS) (stream.CameraTLS, error) {
	ct := stream.CameraTLS{InsecureSkipVerify: t.InsecureSkipVerify}
	var err error
	if ct.Fingerprint, err = t.FingerprintSHA256(); err != nil {
		return ct, fmt.Errorf("tls.fingerprint: %w", err)
	}
	if t.CAFile != "" {
		if ct.Roots, err = loadCAs(t.CAFile); err != nil {
			return ct, fmt.Errorf("tls.ca_file: %w", err)
		}
	}
	return ct, nil
}
