package controller

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controller/workqueue"
)

// Metrics are the Prometheus metrics of a set of controllers, registered
// with a registry the caller owns (never the global one, so two factories in
// one process do not collide). A nil *Metrics records nothing.
type Metrics struct {
	depth           *prometheus.GaugeVec
	adds            *prometheus.CounterVec
	retries         *prometheus.CounterVec
	queueWait       *prometheus.HistogramVec
	handlerDuration *prometheus.HistogramVec
	handlerErrors   *prometheus.CounterVec
	handlerPanics   *prometheus.CounterVec
	handlerFights   *prometheus.CounterVec
	stalePasses     *prometheus.CounterVec
	outlived        *prometheus.CounterVec
}

// NewMetrics creates the controller metrics and registers them with reg.
// When caches is not nil, the number of cached objects per kind is reported
// too, read from the informers at scrape time.
func NewMetrics(reg prometheus.Registerer, caches *cache.SharedCacheFactory) (*Metrics, error) {
	buckets := prometheus.ExponentialBuckets(0.0001, 4, 12) // 100µs .. ~7 min
	m := &Metrics{
		depth: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "lariat_queue_depth", Help: "Keys ready to be handled, per kind.",
		}, []string{"gvk"}),
		adds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lariat_queue_adds_total", Help: "Keys added to the queue, per kind and priority (high: watch events and enqueues; low: initial list and resync).",
		}, []string{"gvk", "priority"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lariat_queue_retries_total", Help: "Keys re-queued with backoff after a handler error, per kind.",
		}, []string{"gvk"}),
		queueWait: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "lariat_queue_wait_seconds", Help: "Time a key waited in the queue before a worker took it, per kind.", Buckets: buckets,
		}, []string{"gvk"}),
		handlerDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "lariat_handler_duration_seconds", Help: "Time spent in each handler, per kind and handler.", Buckets: buckets,
		}, []string{"gvk", "handler"}),
		handlerErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lariat_handler_errors_total", Help: "Handler calls that returned an error, panicked or ended their goroutine (runtime.Goexit), per kind and handler.",
		}, []string{"gvk", "handler"}),
		handlerPanics: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lariat_handler_panics_total", Help: "Handler calls that panicked, per kind and handler.",
		}, []string{"gvk", "handler"}),
		handlerFights: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lariat_handler_fights_total", Help: "Episodes in which a key's handlers kept rewriting its object, each write starting the next pass, so that the key was backed off; per kind (see Options.RewriteLimit).",
		}, []string{"gvk"}),
		stalePasses: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lariat_handler_stale_passes_total", Help: "Passes skipped because the cached object was older than a version the kind's handlers had written (the cache lagged behind their writes), per kind.",
		}, []string{"gvk"}),
		outlived: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lariat_handlers_outlived_stop_grace_total", Help: "Handler calls still running when the stop grace period after their run's end had passed, per kind and handler (see Options.StopGrace).",
		}, []string{"gvk", "handler"}),
	}
	collectors := []prometheus.Collector{m.depth, m.adds, m.retries, m.queueWait, m.handlerDuration, m.handlerErrors, m.handlerPanics, m.handlerFights, m.stalePasses, m.outlived}
	if caches != nil {
		collectors = append(collectors, cachedObjects{caches})
	}
	for _, c := range collectors {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *Metrics) handlerDone(gvk, handler string, began time.Time, err error, panicked bool) {
	if m == nil {
		return
	}
	m.handlerDuration.WithLabelValues(gvk, handler).Observe(time.Since(began).Seconds())
	if err != nil {
		m.handlerErrors.WithLabelValues(gvk, handler).Inc()
	}
	if panicked {
		m.handlerPanics.WithLabelValues(gvk, handler).Inc()
	}
}

// fightStarted counts an episode of handlers rewriting a key in a loop.
func (m *Metrics) fightStarted(gvk string) {
	if m == nil {
		return
	}
	m.handlerFights.WithLabelValues(gvk).Inc()
}

// outlivedGrace counts a handler call still running after its run's stop
// grace period.
func (m *Metrics) outlivedGrace(gvk, handler string) {
	if m == nil {
		return
	}
	m.outlived.WithLabelValues(gvk, handler).Inc()
}

// queueMetrics returns the queue hooks for one kind, with its label values
// resolved once rather than on every add.
func (m *Metrics) queueMetrics(gvk string) workqueue.Metrics {
	if m == nil {
		return nil
	}
	return &queueMetrics{
		depth:     m.depth.WithLabelValues(gvk),
		addsHigh:  m.adds.WithLabelValues(gvk, "high"),
		addsLow:   m.adds.WithLabelValues(gvk, "low"),
		retries:   m.retries.WithLabelValues(gvk),
		queueWait: m.queueWait.WithLabelValues(gvk),
	}
}

type queueMetrics struct {
	depth             prometheus.Gauge
	addsHigh, addsLow prometheus.Counter
	retries           prometheus.Counter
	queueWait         prometheus.Observer
}

func (q *queueMetrics) Added(p workqueue.Priority) {
	if p == workqueue.High {
		q.addsHigh.Inc()
	} else {
		q.addsLow.Inc()
	}
}
func (q *queueMetrics) Depth(n int)            { q.depth.Set(float64(n)) }
func (q *queueMetrics) Waited(d time.Duration) { q.queueWait.Observe(d.Seconds()) }
func (q *queueMetrics) Retried()               { q.retries.Inc() }

// cachedObjects reports how many objects each informer holds, computed when
// scraped so the hot path pays nothing.
type cachedObjects struct{ caches *cache.SharedCacheFactory }

var (
	cachedObjectsDesc = prometheus.NewDesc("lariat_cache_objects", "Objects held in the informer cache, per kind.", []string{"gvk"}, nil)
	listWatchErrsDesc = prometheus.NewDesc("lariat_cache_list_watch_errors_total",
		"Failed lists and watches, and watch streams that ended with an error, per kind.", []string{"gvk"}, nil)
	failingDesc = prometheus.NewDesc("lariat_cache_list_watch_failing_seconds",
		"How long a kind has been failing to list or watch (its cache going stale); 0 while it works.", []string{"gvk"}, nil)
)

func (c cachedObjects) Describe(ch chan<- *prometheus.Desc) {
	ch <- cachedObjectsDesc
	ch <- listWatchErrsDesc
	ch <- failingDesc
}

func (c cachedObjects) Collect(ch chan<- prometheus.Metric) {
	send := func(m prometheus.Metric, err error) {
		if err == nil {
			ch <- m
		}
	}
	for gvk, informer := range c.caches.Informers() {
		send(prometheus.NewConstMetric(cachedObjectsDesc, prometheus.GaugeValue,
			float64(len(informer.GetStore().ListKeys())), KindLabel(gvk)))
	}
	for gvk, h := range c.caches.WatchHealth() {
		send(prometheus.NewConstMetric(listWatchErrsDesc, prometheus.CounterValue, float64(h.Errors), KindLabel(gvk)))
		failing := 0.0
		if !h.FailingSince.IsZero() {
			failing = time.Since(h.FailingSince).Seconds()
		}
		send(prometheus.NewConstMetric(failingDesc, prometheus.GaugeValue, failing, KindLabel(gvk)))
	}
}

// KindLabel names a kind in metrics, logs and event-loop resources as
// group/version/Kind ("apps/v1/Deployment", "v1/ConfigMap"). It is
// cache.KindLabel, which the caches' own log lines and errors use, so that
// every layer names a kind alike.
func KindLabel(gvk schema.GroupVersionKind) string { return cache.KindLabel(gvk) }

func (m *Metrics) stalePassSkipped(gvk string) {
	if m == nil {
		return
	}
	m.stalePasses.WithLabelValues(gvk).Inc()
}
