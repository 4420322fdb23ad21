package controller_test

import (
	"context"
	goruntime "runtime"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// settledGoroutines waits until there are at most want goroutines and
// returns the last count.
func settledGoroutines(want int) int {
	deadline := time.Now().Add(10 * time.Second)
	n := goruntime.NumGoroutine()
	for n > want && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		n = goruntime.NumGoroutine()
	}
	return n
}

// TestStoppedControllersLeaveNothingBehind starts and stops controllers on
// an informer that keeps running (a controller per leadership term, say).
// Each stopped controller must take its event handler off the informer:
// client-go runs two goroutines per registered handler and hands it every
// event, so a handler left behind is a leak that grows with each term.
func TestStoppedControllersLeaveNothingBehind(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	f := newFactory(t, cp.Config(), ns, setup{})
	caches := f.SharedCacheFactory()
	informer, err := caches.ForKind(configMapGVK)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if err := caches.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := caches.WaitForCacheSync(ctx); err != nil {
		t.Fatal(err)
	}
	createCM(t, cp.Config(), ns, "cm", nil)
	before := settledGoroutines(0)

	const terms = 20
	for i := range terms {
		handled := make(chan struct{}, 1)
		c, err := controller.New("term", informer, controller.HandlerFunc(func(string, runtime.Object) error {
			select {
			case handled <- struct{}{}:
			default:
			}
			return nil
		}), &controller.Options{Logger: controlplanetest.QuietLogger()})
		if err != nil {
			t.Fatal(err)
		}
		term, end := context.WithCancel(ctx)
		if err := c.Start(term, 2); err != nil {
			t.Fatal(err)
		}
		select {
		case <-handled:
		case <-time.After(30 * time.Second):
			t.Fatalf("term %d: the controller handled nothing", i)
		}
		end()
	}
	// A few goroutines of the HTTP/2 connection may come and go.
	if after := settledGoroutines(before + 5); after > before+5 {
		t.Fatalf("%d stopped controllers left %d goroutines behind (%d before, %d after): their event handlers are still registered",
			terms, after-before, before, after)
	}
}
