package controller

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	kruntime "k8s.io/apimachinery/pkg/runtime"
)

// TestAdv7AGateOrHandlingThatCallsGoexitIsRetried (issue 30, h30g; held):
// a Gate's Admit, and then a PassTracker's Handling, that call
// runtime.Goexit on the first pass of ns/k: the pass fails, ns/k is
// retried (its Gate and the handler run), and a new worker takes the
// place of the one that ended.
func TestAdv7AGateOrHandlingThatCallsGoexitIsRetried(t *testing.T) {
	for _, where := range []string{"gate", "handling"} {
		var exits, handled atomic.Int32
		sentinel := newAdv5Sentinel()
		opts := &Options{RateLimiter: &adv5Retry{delay: 10 * time.Millisecond}}
		exitOnce := func(key string) {
			if key == "ns/k" && exits.Add(1) == 1 {
				runtime.Goexit()
			}
		}
		if where == "gate" {
			opts.Gate = GateFunc(func(_ context.Context, key string, _ kruntime.Object) (bool, error) {
				exitOnce(key)
				return true, nil
			})
		} else {
			opts.Passes, opts.Resource = adv7ExitTracker(exitOnce), adv4Resource
		}
		c, _, _ := adv5DeletingController(t, opts, func(key string, obj kruntime.Object) error {
			sentinel.seen(key)
			if key == "ns/k" {
				handled.Add(1)
			}
			return nil
		})
		if err := c.Start(t.Context(), 1); err != nil {
			t.Fatal(err)
		}
		adv5WaitFor(t, "ns/k handled after its "+where+" called Goexit", func() bool { return exits.Load() >= 1 && handled.Load() >= 1 })
		adv7SentinelWithin(t, sentinel, c, 0, 20*time.Second, "after the %s called Goexit", where)
	}
}

// TestAdv7ADeletionWhoseHandlerCallsGoexitIsToldAgain (issue 30, h30g;
// held): the handler calls runtime.Goexit in its first pass telling it
// ns/k is gone; the deletion is not marked told, and its retry tells it.
func TestAdv7ADeletionWhoseHandlerCallsGoexitIsToldAgain(t *testing.T) {
	var deletions atomic.Int32
	c, fw, cm := adv5DeletingController(t, &Options{RateLimiter: &adv5Retry{delay: 10 * time.Millisecond}}, func(key string, obj kruntime.Object) error {
		if key == "ns/k" && obj == nil && deletions.Add(1) == 1 {
			runtime.Goexit()
		}
		return nil
	})
	if err := c.Start(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	fw.Delete(cm)
	adv5WaitFor(t, "the deletion told a second time after the first telling called Goexit", func() bool { return deletions.Load() >= 2 })
	time.Sleep(200 * time.Millisecond)
	if n := deletions.Load(); n != 2 {
		t.Fatalf("the handler was told %d times that ns/k is gone, want twice (the Goexit and its retry)", n)
	}
}

// TestAdv7AHandlerGoexitIsCountedAsAnError (issue 30, h30g): a handler
// that calls runtime.Goexit fails its pass (it is logged "handler failed,
// retrying" and retried), but callHandler's deferred metrics see no
// error: lariat_handler_errors_total does not count it, so the metrics
// say the handler never failed. Fixed (h30h): callHandler's deferred
// step counts a call that never returned and did not panic as errExited.
func TestAdv7AHandlerGoexitIsCountedAsAnError(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg, nil)
	if err != nil {
		t.Fatal(err)
	}
	var passes atomic.Int32
	c, _, _ := adv5DeletingController(t, &Options{Metrics: m, GVK: "adv7", RateLimiter: &adv5Retry{delay: 10 * time.Millisecond}}, func(key string, obj kruntime.Object) error {
		if key == "ns/k" && passes.Add(1) == 1 {
			runtime.Goexit()
		}
		return nil
	})
	if err := c.Start(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	adv5WaitFor(t, "ns/k's retry after its handler called Goexit", func() bool { return passes.Load() >= 2 })
	if n := adv7Counter(t, reg, "lariat_handler_errors_total"); n != 1 {
		t.Fatalf("lariat_handler_errors_total{handler=adv5} is %v after a pass whose handler called runtime.Goexit (retried as failed), want 1", n)
	}
}

// adv7ExitTracker is a PassTracker whose Handling calls exit first.
type adv7ExitTracker func(key string)

func (f adv7ExitTracker) Handling(ref ObjectRef, _ string) func() {
	f(ref.Namespace + "/" + ref.Name)
	return func() {}
}

// adv7Counter sums the counter name of reg over its labels.
func adv7Counter(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			sum += m.GetCounter().GetValue()
		}
	}
	return sum
}
