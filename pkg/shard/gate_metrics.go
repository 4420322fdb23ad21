package shard

import (
	"errors"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/lariat-dev/lariat/pkg/cache"
)

// Reasons of lariat_shard_gate_refused_total: why the gate kept a pass
// from the handlers.
const (
	refusedNotMine   = "not_mine"  // the cached object is assigned elsewhere or to no one
	refusedDraining  = "draining"  // the object drains from this member: the gate acknowledges instead
	refusedUncached  = "uncached"  // absent from the cache but not deleted: moved away, or not cached yet
	refusedUntrailed = "untrailed" // labelled for this member outside the protocol: its trail names another member or a release
	refusedUnclaimed = "unclaimed" // labelled for this member with no trail yet: the gate claims it first
)

// errAlreadyRegistered: a member's gate metrics go to one registry.
var errAlreadyRegistered = errors.New("shard: the member's gate metrics are registered already")

// gateMetrics are the counters of a member's gates, one set per term: they
// carry the ring and the term's member ID as constant labels, and the kind
// as a variable one, gvk, named as in the controllers' metrics
// (cache.KindLabel).
type gateMetrics struct {
	admitted, refused, acked *prometheus.CounterVec

	mu  sync.Mutex
	reg prometheus.Registerer // where they are registered, nil if nowhere
}

func newGateMetrics(ring, member string) *gateMetrics {
	labels := prometheus.Labels{"ring": ring, "member": member}
	return &gateMetrics{
		admitted: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "lariat_shard_gate_admitted_total", ConstLabels: labels,
			Help: "Passes of sharded objects the member's gate let through to the handlers, per kind."}, []string{"gvk"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "lariat_shard_gate_refused_total", ConstLabels: labels,
			Help: "Passes of sharded objects the member's gate kept from the handlers, per kind and reason (not_mine, draining, uncached, untrailed, unclaimed)."}, []string{"gvk", "reason"}),
		acked: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "lariat_shard_gate_drains_acknowledged_total", ConstLabels: labels,
			Help: "Drains the member acknowledged (it let go of the object), per kind."}, []string{"gvk"}),
	}
}

func (g *gateMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{g.admitted, g.refused, g.acked}
}

// register registers the counters with r, all or none.
func (g *gateMetrics) register(r prometheus.Registerer) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.reg != nil {
		return errAlreadyRegistered
	}
	for i, c := range g.collectors() {
		if err := r.Register(c); err != nil {
			for _, done := range g.collectors()[:i] {
				r.Unregister(done)
			}
			return err
		}
	}
	g.reg = r
	return nil
}

// unregister takes the counters out of the registry they were registered
// with, if any.
func (g *gateMetrics) unregister() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.reg == nil {
		return
	}
	for _, c := range g.collectors() {
		g.reg.Unregister(c)
	}
	g.reg = nil
}

func (g *gateMetrics) admit(gvk schema.GroupVersionKind) {
	g.admitted.WithLabelValues(cache.KindLabel(gvk)).Inc()
}

func (g *gateMetrics) refuse(gvk schema.GroupVersionKind, reason string) {
	g.refused.WithLabelValues(cache.KindLabel(gvk), reason).Inc()
}

func (g *gateMetrics) acknowledged(gvk schema.GroupVersionKind) {
	g.acked.WithLabelValues(cache.KindLabel(gvk)).Inc()
}
