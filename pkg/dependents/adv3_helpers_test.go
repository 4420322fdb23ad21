package dependents_test

import (
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// Helpers of the third round of adversarial tests (adv3_*_test.go); those
// still open call advOpen (adv2_helpers_test.go).

// advGate holds the event loop in a handler call: a handler calls hold
// for the owner the gate is armed for, which blocks until the test opens
// it, so that the test can line events up in the loop's queue in the
// order it needs.
type advGate struct {
	armed   chan struct{} // closed by arm
	entered chan struct{} // closed when a handler call is held
	opened  chan struct{} // closed by open
	once    sync.Once
}

// newAdvGate returns a gate, opened at the end of the test if it is not
// by then (a failed test does not leave the loop held).
func newAdvGate(t *testing.T) *advGate {
	g := &advGate{armed: make(chan struct{}), entered: make(chan struct{}), opened: make(chan struct{})}
	t.Cleanup(g.open)
	return g
}

// arm makes the next hold block.
func (g *advGate) arm() { close(g.armed) }

// hold blocks, once armed, until the gate is opened (only the first call
// after arm blocks; the loop has one goroutine).
func (g *advGate) hold() {
	select {
	case <-g.armed:
	default:
		return
	}
	select {
	case <-g.entered:
		return // already held once
	default:
	}
	close(g.entered)
	<-g.opened
}

// open lets the held call go on.
func (g *advGate) open() { g.once.Do(func() { close(g.opened) }) }

// queueLength reads the event loop's queue length from reg (the loop's
// Registerer).
func queueLength(t *testing.T, reg *prometheus.Registry) int {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "lariat_eventloop_queue_length" && len(mf.GetMetric()) > 0 {
			return int(mf.GetMetric()[0].GetGauge().GetValue())
		}
	}
	t.Fatal("no lariat_eventloop_queue_length in the registry")
	return 0
}

// waitQueued waits until the loop's queue holds at least n events.
func waitQueued(t *testing.T, reg *prometheus.Registry, n int, what string) {
	t.Helper()
	controlplanetest.Eventually(t, wait, what+" queued", func() bool { return queueLength(t, reg) >= n })
}
