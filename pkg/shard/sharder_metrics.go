package shard

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// drains remembers the objects the term saw draining, since when, and
// whether their lateness was reported, so that each late drain is reported
// once.
type drains struct {
	mu sync.Mutex
	m  map[objKey]*drain
}

type drain struct {
	member   string
	since    time.Time
	reported bool
}

func newDrains() *drains { return &drains{m: map[objKey]*drain{}} }

// track records that k drains from member since now, or (member "") that
// it does not drain.
func (d *drains) track(k objKey, member string, now time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if member == "" {
		delete(d.m, k)
		return
	}
	if cur, ok := d.m[k]; !ok || cur.member != member {
		d.m[k] = &drain{member: member, since: now}
	}
}

// counts returns how many drains are pending and how many of them are
// older than timeout.
func (d *drains) counts(now time.Time, timeout time.Duration) (pending, overdue int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, x := range d.m {
		if now.Sub(x.since) > timeout {
			overdue++
		}
	}
	return len(d.m), overdue
}

// reportDrains logs each drain older than DrainTimeout, once, until ctx
// ends. Drains are timed from when this term first saw them.
func (t *term) reportDrains(ctx context.Context) {
	timeout := t.s.o.DrainTimeout
	tick := min(max(timeout/10, 100*time.Millisecond), 5*time.Second)
	tk := time.NewTicker(tick)
	defer tk.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tk.C:
		}
		now := time.Now()
		t.drains.mu.Lock()
		for k, x := range t.drains.m {
			if !x.reported && now.Sub(x.since) > timeout {
				x.reported = true
				t.s.log.WithFields(map[string]any{
					"kind": t.kinds[k.kind].GVK.Kind, "object": k.key, "member": x.member,
					"since": x.since.UTC().Format(time.RFC3339),
				}).Warnf("shard: drain not acknowledged within %v; it is not forced: the member must release the object", timeout)
			}
		}
		t.drains.mu.Unlock()
	}
}

// metrics are the ring's Prometheus metrics: a counter, and gauges
// computed from the running term's views when scraped.
type metrics struct {
	s                               *Sharder
	moves                           prometheus.Counter
	objects, drainsPending, overdue *prometheus.Desc
}

func newMetrics(s *Sharder) *metrics {
	ring := prometheus.Labels{"ring": s.ring.Name}
	return &metrics{
		s: s,
		moves: prometheus.NewCounter(prometheus.CounterOpts{Name: "lariat_shard_moves_total", ConstLabels: ring,
			Help: "Moves of sharded objects off a member begun by the sharder: drains set, and direct reassignments from dead members."}),
		objects: prometheus.NewDesc("lariat_shard_objects",
			"Sharded objects per assigned member, as the elected sharder sees them (member \"\": unassigned).", []string{"member"}, ring),
		drainsPending: prometheus.NewDesc("lariat_shard_drains_pending",
			"Sharded objects asked to drain whose member has not acknowledged yet.", nil, ring),
		overdue: prometheus.NewDesc("lariat_shard_drains_overdue",
			"Pending drains older than the sharder's drain timeout.", nil, ring),
	}
}

func (m *metrics) register(r prometheus.Registerer) error {
	return r.Register(m)
}

// Describe implements prometheus.Collector.
func (m *metrics) Describe(ch chan<- *prometheus.Desc) {
	m.moves.Describe(ch)
	ch <- m.objects
	ch <- m.drainsPending
	ch <- m.overdue
}

// Collect implements prometheus.Collector.
func (m *metrics) Collect(ch chan<- prometheus.Metric) {
	m.moves.Collect(ch)
	m.s.mu.Lock()
	t := m.s.cur
	m.s.mu.Unlock()
	if t == nil {
		return
	}
	label := AssignmentLabel(m.s.ring.Name)
	perMember := map[string]int{}
	for _, inf := range t.informers {
		for _, o := range inf.GetStore().List() {
			if obj, ok := o.(metav1.Object); ok {
				perMember[obj.GetLabels()[label]]++
			}
		}
	}
	send := func(d *prometheus.Desc, v int, labels ...string) {
		if c, err := prometheus.NewConstMetric(d, prometheus.GaugeValue, float64(v), labels...); err == nil {
			ch <- c
		}
	}
	for member, n := range perMember {
		send(m.objects, n, member)
	}
	pending, overdue := t.drains.counts(time.Now(), m.s.o.DrainTimeout)
	send(m.drainsPending, pending)
	send(m.overdue, overdue)
}
