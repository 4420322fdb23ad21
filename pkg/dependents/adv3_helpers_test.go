package dependents_test

import (
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	democtl "github.com/lariat-dev/lariat/generated/controllers/demo.lariat.dev/v1"
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

// advRecreateWhileHeld deletes the WebApp at ns/name and creates it again
// (another UID) with config, while the WebApp worker is held on its key
// by a handler of the test's that calls gate.hold for it: the bridge then
// reads the key once, and the loop gets one change from the old WebApp to
// the new one, no deletion. It returns the new WebApp once the informer's
// cache has it, the worker let go.
func advRecreateWhileHeld(t *testing.T, webapps democtl.WebAppController, gate *advGate, ns, name string,
	config map[string]string) *demov1.WebApp {
	t.Helper()
	ctx := t.Context()
	gate.arm()
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		app, err := webapps.Get(ctx, ns, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		app.Labels = map[string]string{"touched": "yes"}
		_, err = webapps.Update(ctx, app)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	<-gate.entered
	if err := webapps.Delete(ctx, ns, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	fresh := advCreateApp(t, webapps, ns, name, config)
	controlplanetest.Eventually(t, wait, "the new "+name+" in the cache", func() bool {
		o, err := webapps.Cache().Get(ns, name)
		return err == nil && o.UID == fresh.UID
	})
	gate.open()
	return fresh
}
