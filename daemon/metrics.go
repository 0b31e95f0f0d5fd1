package daemon

import (
	"net/http"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics is physd's Prometheus registry. Counters and gauges are read
// from the cameras and the NATS connection at scrape time, so /metrics,
// the NATS status messages and /api agree by construction; only the
// training-time histogram is observed as windows finish, and the HTTP
// rejection counter as requests are refused.
type metrics struct {
	reg      *prometheus.Registry
	training *prometheus.HistogramVec
	// rejected counts HTTP requests refused before any handler ran, by
	// reason (rejectRateLimit).
	rejected *prometheus.CounterVec
}

// Reasons of physd_http_rejected_total.
const (
	// rejectRateLimit: the client was over http.rate_limit (429).
	rejectRateLimit = "rate_limit"
)

func newMetrics(d *Daemon) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		training: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "physd_training_seconds",
			Help: "Wall time of encoder training and fitting per window.",
			// 5 ms (a warm window on a fast core) to 10 s (a cold start on a slow board).
			Buckets: prometheus.ExponentialBucketsRange(0.005, 10, 12),
		}, []string{"camera"}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "physd_http_rejected_total",
			Help: "HTTP requests refused before reaching a handler, by reason (rate_limit: the client was over http.rate_limit and got 429).",
		}, []string{"reason"}),
	}
	// Present from the start, so a rate() over it has a first sample.
	m.rejected.WithLabelValues(rejectRateLimit)
	m.reg.MustRegister(m.training, m.rejected, daemonCollector{d},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

var (
	camLabel      = []string{"camera"}
	descFrames    = prometheus.NewDesc("physd_frames_received_total", "Frames received from the camera's source.", camLabel, nil)
	descDrop      = prometheus.NewDesc("physd_frames_dropped_total", "Frames dropped (late, duplicate or outside the window grid).", camLabel, nil)
	descBreaks    = prometheus.NewDesc("physd_stream_breaks_total", "Gaps in the frame sequence (lost or undecodable frames) that broke a window.", camLabel, nil)
	descDecode    = prometheus.NewDesc("physd_decode_errors_total", "Received frames the decoder rejected (WebRTC cameras; OpenCV's FFmpeg reader conceals corrupt frames and reports none).", camLabel, nil)
	descReconn    = prometheus.NewDesc("physd_reconnects_total", "Times the camera's source was reopened.", camLabel, nil)
	descEvBuf     = prometheus.NewDesc("physd_evidence_buffer_bytes", "The camera's buffer of recent compressed packets, kept for alerts' evidence clips (alerts.evidence).", camLabel, nil)
	descSkip      = prometheus.NewDesc("physd_windows_skipped_total", "Windows replaced by a newer one before estimation started.", camLabel, nil)
	descWin       = prometheus.NewDesc("physd_windows_total", "Windows estimated, by verdict.", []string{"camera", "verdict"}, nil)
	descState     = prometheus.NewDesc("physd_camera_state", "1 for the camera's current state.", []string{"camera", "state"}, nil)
	descG0        = prometheus.NewDesc("physd_gamma0", "γ0 of the latest certified estimate (1/s²).", camLabel, nil)
	descG1        = prometheus.NewDesc("physd_gamma1", "γ1 of the latest certified estimate (1/s).", camLabel, nil)
	descFn        = prometheus.NewDesc("physd_natural_frequency_hz", "f_n = √γ0/2π of the latest certified estimate.", camLabel, nil)
	descZeta      = prometheus.NewDesc("physd_damping_ratio", "ζ = γ1/(2√γ0) of the latest certified estimate.", camLabel, nil)
	descModeFn    = prometheus.NewDesc("physd_mode_natural_frequency_hz", "f_n of the latest certified estimate of each mode, for a camera whose windows ring in several (mode: its label, kept from window to window; 1 is physd_natural_frequency_hz's).", []string{"camera", "mode"}, nil)
	descModeZeta  = prometheus.NewDesc("physd_mode_damping_ratio", "ζ of the latest certified estimate of each mode, by label (physd_mode_natural_frequency_hz).", []string{"camera", "mode"}, nil)
	descChart     = prometheus.NewDesc("physd_alert_chart_statistic", "The alerts' control chart statistic |Z| in units of its baseline spread, by quantity (fn_hz, zeta); the alert is raised beyond physd_alert_chart_limit (docs/alerts.md). Absent while the chart learns its baseline.", []string{"camera", "quantity"}, nil)
	descChartLim  = prometheus.NewDesc("physd_alert_chart_limit", "The control chart's alarm level, in the statistic's units.", []string{"camera", "quantity"}, nil)
	descChartAlm  = prometheus.NewDesc("physd_alert_chart_alarm", "1 while the quantity's control chart is in alarm.", []string{"camera", "quantity"}, nil)
	descPubErr    = prometheus.NewDesc("physd_nats_publish_errors_total", "Messages that could not be handed to NATS.", nil, nil)
	descBuf       = prometheus.NewDesc("physd_nats_buffered_bytes", "Bytes buffered by the NATS client while disconnected.", nil, nil)
	descOutbox    = prometheus.NewDesc("physd_outbox_messages", "Messages waiting in the on-disk outbox for NATS.", nil, nil)
	descEvict     = prometheus.NewDesc("physd_outbox_evicted_total", "Messages dropped because the outbox was full, by class (diagnostic first, essential = estimates and alerts last).", []string{"class"}, nil)
	descAside     = prometheus.NewDesc("physd_outbox_set_aside_total", "Corrupt outbox records set aside at start.", nil, nil)
	descConn      = prometheus.NewDesc("physd_nats_connected", "1 when the NATS connection is up.", nil, nil)
	descStage     = prometheus.NewDesc("physd_stage_seconds_total", "Wall time of a camera's pipeline, by stage: decode and preprocess (per frame: decoding; gray, crop, resize), motion (the camera's own), train (the learner's warm training and cold starts), fit (the learner's estimate fits), certify (certifying its estimates), weigh (tracked objects, certificates, the choice), publish (the diagnostic and estimate on NATS).", []string{"camera", "stage"}, nil)
	descCold      = prometheus.NewDesc("physd_cold_starts_total", "Windows on which the learner ran a cold start (its first, and the fallback when the warm encoder's estimate was not certified).", camLabel, nil)
	descUntrained = prometheus.NewDesc("physd_windows_untrained_total", "Windows estimated with the warm encoder as it stood, without training on them: it was certifying (it still trains every few windows and whenever refused), or the scene keeps refusing it and its training is held back like the cold starts.", camLabel, nil)
	descHeld      = prometheus.NewDesc("physd_cold_starts_held_total", "Windows whose warm estimate was not certified and whose cold start was held back: the scene refused the last ones and its motion has not changed.", camLabel, nil)
)

// decodeCounter is a source that counts the frames its decoder rejected.
type decodeCounter interface{ DecodeErrors() int64 }

// daemonCollector reads the daemon's counters at scrape time.
type daemonCollector struct{ d *Daemon }

// Describe implements prometheus.Collector.
func (daemonCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descFrames, descDrop, descBreaks, descDecode, descReconn, descSkip, descWin, descState,
		descEvBuf, descG0, descG1, descFn, descZeta, descModeFn, descModeZeta, descChart, descChartLim, descChartAlm, descPubErr, descBuf, descConn, descOutbox, descEvict, descAside, descStage, descCold, descHeld, descUntrained} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c daemonCollector) Collect(ch chan<- prometheus.Metric) {
	d := c.d
	d.mu.Lock()
	cams := make([]*line, 0, len(d.lines))
	for _, cam := range d.lines {
		cams = append(cams, cam)
	}
	b := d.bus
	d.mu.Unlock()
	counter := func(desc *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.CounterValue, v, labels...)
	}
	gauge := func(desc *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, v, labels...)
	}
	for _, cam := range cams {
		st := cam.status()
		name := cam.key()
		counter(descFrames, float64(st.Frames), name)
		counter(descDrop, float64(st.FramesDropped), name)
		counter(descBreaks, float64(st.Breaks), name)
		counter(descReconn, float64(st.Reconnects), name)
		if dc, ok := cam.src.(decodeCounter); ok && cam.zone == "" {
			counter(descDecode, float64(dc.DecodeErrors()), name)
		}
		if ev := cam.spec.evidence; ev != nil && ev.ring != nil && cam.zone == "" {
			_, bytes, _ := ev.ring.Stats()
			gauge(descEvBuf, float64(bytes), name)
		}
		counter(descSkip, float64(st.WindowsSkipped), name)
		for v, n := range st.Windows {
			counter(descWin, float64(n), name, v)
		}
		gauge(descState, 1, name, string(st.State))
		for s := range nStages {
			counter(descStage, cam.work.seconds(s), name, s.String())
		}
		counter(descCold, float64(cam.work.coldStarts.Load()), name)
		counter(descHeld, float64(cam.work.coldHeld.Load()), name)
		counter(descUntrained, float64(cam.work.untrained.Load()), name)
		e, _ := cam.rec.latest()
		if e != nil {
			gauge(descG0, e.Gamma0, name)
			gauge(descG1, e.Gamma1, name)
			gauge(descFn, e.Fn, name)
			gauge(descZeta, e.Zeta, name)
		}
		for _, e := range cam.rec.modeEstimates() {
			label := strconv.Itoa(e.Mode.Label)
			gauge(descModeFn, e.Fn, name, label)
			gauge(descModeZeta, e.Zeta, name, label)
		}
		for _, c := range st.Charts {
			if c.State == "learning" {
				continue
			}
			gauge(descChart, c.Statistic, name, c.Quantity)
			gauge(descChartLim, c.Limit, name, c.Quantity)
			alarm := 0.0
			if c.State == "alarm" {
				alarm = 1
			}
			gauge(descChartAlm, alarm, name, c.Quantity)
		}
	}
	if b != nil {
		counter(descPubErr, float64(b.publishErrors.Load()))
		if b.out != nil {
			st := b.out.Stats()
			gauge(descOutbox, float64(st.Queued))
			counter(descEvict, float64(st.EvictedDiagnostic), "diagnostic")
			counter(descEvict, float64(st.EvictedEssential), "essential")
			counter(descAside, float64(st.SetAside))
		}
		if b.nc != nil {
			buffered, _ := b.nc.Buffered()
			gauge(descBuf, float64(buffered))
			up := 0.0
			if b.nc.IsConnected() {
				up = 1
			}
			gauge(descConn, up)
		}
	}
}
