package eventloop_test

import (
	"errors"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/lariat-dev/lariat/pkg/eventloop"
	el "github.com/lariat-dev/lariat/pkg/eventloop/eventlooptest"
)

// metricValue returns the value of the series of family name whose labels
// include all of labels.
func metricValue(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) (float64, bool) {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	series:
		for _, m := range mf.GetMetric() {
			for k, v := range labels {
				found := false
				for _, lp := range m.GetLabel() {
					if lp.GetName() == k && lp.GetValue() == v {
						found = true
					}
				}
				if !found {
					continue series
				}
			}
			return value(m), true
		}
	}
	return 0, false
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Histogram != nil:
		return float64(m.Histogram.GetSampleCount())
	}
	return 0
}

func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	e := newEnv(t, []string{"a"}, func(o *eventloop.Options) {
		o.Registerer = reg
		o.Name = "main"
	})
	failingOn(e.h("a"), "bad")
	e.push(el.NewUpdate("held"))
	e.push(el.NewUpdate("held"))
	if v, _ := metricValue(t, reg, "lariat_eventloop_queue_length", map[string]string{"loop": "main"}); v != 2 {
		t.Fatalf("queue length %v, want 2", v)
	}
	e.startRunning()
	_ = e.run(el.NewUpdate("ok"))
	_ = e.run(el.NewUpdate("bad"))
	e.waitProcessed(4)
	checks := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"lariat_eventloop_events_total", map[string]string{"loop": "main", "event": "held", "outcome": "ok"}, 2},
		{"lariat_eventloop_events_total", map[string]string{"event": "ok", "outcome": "ok"}, 1},
		{"lariat_eventloop_events_total", map[string]string{"event": "bad", "outcome": "error"}, 1},
		{"lariat_eventloop_events_total", map[string]string{"event": "startup", "outcome": "ok"}, 1},
		{"lariat_eventloop_event_duration_seconds", map[string]string{"event": "held"}, 2},
		{"lariat_eventloop_queue_length", nil, 0},
		{"lariat_eventloop_healthy", nil, 1},
	}
	for _, c := range checks {
		if v, ok := metricValue(t, reg, c.name, c.labels); !ok || v != c.want {
			t.Errorf("%s%v = %v (found %v), want %v", c.name, c.labels, v, ok, c.want)
		}
	}

	// A second loop needs another name on the same registry.
	if _, err := eventloop.New(eventloop.Options{Registerer: reg, Name: "main"}); err == nil {
		t.Fatal("two loops registered the same metrics")
	}
	other, err := eventloop.New(eventloop.Options{Registerer: reg, Name: "other"})
	if err != nil {
		t.Fatal(err)
	}
	_ = other.Close()

	_ = e.loop.Close()
	if v, _ := metricValue(t, reg, "lariat_eventloop_healthy", map[string]string{"loop": "main"}); v != 0 {
		t.Fatalf("healthy = %v after Close", v)
	}
	var closedEv = el.NewUpdate("x")
	if err := e.loop.PushEvent(closedEv); !errors.Is(err, eventloop.ErrClosed) {
		t.Fatal(err)
	}
}

func TestMetricsRejected(t *testing.T) {
	reg := prometheus.NewRegistry()
	e := newEnv(t, []string{"a"}, func(o *eventloop.Options) { o.Registerer = reg })
	e.push(el.NewUpdate("dropped"))
	_ = e.loop.Close()
	if v, _ := metricValue(t, reg, "lariat_eventloop_events_total", map[string]string{"event": "dropped", "outcome": "rejected"}); v != 1 {
		t.Fatalf("rejected = %v, want 1", v)
	}
}
