// Package analysis is physd's one window analysis: the steps that turn a
// window's clips into a reported estimate and its verdict, in the order
// every caller runs them —
//
//	camera motion → fit → certify → weigh
//
// The camera's own motion is measured (on a still reference region, or
// from the frames) and moved out of the frames; the encoder is fitted (a
// cold fit, or a learner's warm window); each estimate the fit considers
// is certified once; and the encoder's readout is weighed against the
// objects the tracker follows through the same frames (window.Choose
// picks). The daemon, `physd estimate` and the report generators call
// Window; what differs between them is a named Option, not a copy.
package analysis
