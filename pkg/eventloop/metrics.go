package eventloop

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the Prometheus metrics of one loop. A nil *metrics records
// nothing, so the hot path pays one nil check when metrics are off.
type metrics struct {
	events   *prometheus.CounterVec
	duration *prometheus.HistogramVec
	outlived *prometheus.CounterVec
	// byName caches the label lookups per event name; it is used only by the
	// loop goroutine.
	byName map[string]*nameMetrics
}

type nameMetrics struct {
	outcomes [numOutcomes]prometheus.Counter
	duration prometheus.Observer
}

// newMetrics registers the metrics of l with reg. name, when set, becomes
// the constant "loop" label, so that several loops can share a registry.
func newMetrics(reg prometheus.Registerer, name string, l *Loop) (*metrics, error) {
	var constLabels prometheus.Labels
	if name != "" {
		constLabels = prometheus.Labels{"loop": name}
	}
	m := &metrics{
		events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name:        "lariat_eventloop_events_total",
			Help:        "Events handled by the event loop, per event name and outcome (ok, error, reverted, aborted, fatal, or rejected when failed without processing because the loop closed or aborted).",
			ConstLabels: constLabels,
		}, []string{"event", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:        "lariat_eventloop_event_duration_seconds",
			Help:        "Time to process an event (handlers, commit, reverts), per event name.",
			ConstLabels: constLabels,
			Buckets:     prometheus.ExponentialBuckets(0.00001, 4, 12), // 10µs .. ~42s
		}, []string{"event"}),
		outlived: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name:        "lariat_eventloop_outlived_stop_total",
			Help:        "Handler (or commit) calls still running when a Stop's bound passed, per event name and handler.",
			ConstLabels: constLabels,
		}, []string{"event", "handler"}),
		byName: make(map[string]*nameMetrics),
	}
	queueLen := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name:        "lariat_eventloop_queue_length",
		Help:        "Events waiting in the queue (including those held until the startup resync).",
		ConstLabels: constLabels,
	}, func() float64 { return float64(l.q.Len()) })
	healthy := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name:        "lariat_eventloop_healthy",
		Help:        "1 while the event loop is starting or running, 0 once it aborted or stopped.",
		ConstLabels: constLabels,
	}, func() float64 {
		if l.Health() != nil {
			return 0
		}
		return 1
	})
	collectors := []prometheus.Collector{m.events, m.duration, m.outlived, queueLen, healthy}
	for i, c := range collectors {
		if err := reg.Register(c); err != nil {
			// Leave the registry as it was, so that the caller can retry
			// (e.g. with another Name).
			for _, done := range collectors[:i] {
				reg.Unregister(done)
			}
			return nil, err
		}
	}
	return m, nil
}

func (m *metrics) processed(name string, oc outcome, d time.Duration) {
	if m == nil {
		return
	}
	nm := m.byName[name]
	if nm == nil {
		nm = &nameMetrics{duration: m.duration.WithLabelValues(name)}
		for i := range nm.outcomes {
			nm.outcomes[i] = m.events.WithLabelValues(name, outcomeNames[i])
		}
		m.byName[name] = nm
	}
	nm.outcomes[oc].Inc()
	nm.duration.Observe(d.Seconds())
}

func (m *metrics) rejected(ev Event) {
	if m == nil {
		return
	}
	m.events.WithLabelValues(safeName(ev), "rejected").Inc()
}

// safeName returns ev.GetName, or "<unknown>" if it panics: it is used on
// paths that must go on to call Done on many events.
func safeName(ev Event) (name string) {
	defer func() {
		if recover() != nil {
			name = "<unknown>"
		}
	}()
	return ev.GetName()
}

// outlivedStop counts a call still running when a Stop's bound passed.
func (m *metrics) outlivedStop(event, handler string) {
	if m == nil {
		return
	}
	m.outlived.WithLabelValues(event, handler).Inc()
}
