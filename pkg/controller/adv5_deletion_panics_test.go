package controller

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	kruntime "k8s.io/apimachinery/pkg/runtime"
)

// TestAdv5AGateThatPanicsOnADeletionTellsItOnce (issue 30, h30d's attack
// on h30b's recovery of a Gate's panic): the Gate's first Admit of ns/k's
// absence panics. The pass fails (the handlers are not told), its retry
// asks the Gate again, which admits, and the handlers are told once that
// ns/k is gone: the failed pass neither marked the deletion told nor lost
// it, and nothing tells it a second time.
func TestAdv5AGateThatPanicsOnADeletionTellsItOnce(t *testing.T) {
	limiter := &adv5Retry{delay: 50 * time.Millisecond}
	var deletions, asked atomic.Int32
	gate := GateFunc(func(_ context.Context, key string, obj kruntime.Object) (bool, error) {
		if key == "ns/k" && obj == nil && asked.Add(1) == 1 {
			panic("the gate's first Admit of the deletion panics")
		}
		return true, nil
	})
	sentinel := newAdv5Sentinel()
	c, fw, cm := adv5DeletingController(t, &Options{Gate: gate, RateLimiter: limiter}, func(key string, obj kruntime.Object) error {
		sentinel.seen(key)
		if key == "ns/k" && obj == nil {
			deletions.Add(1)
		}
		return nil
	})
	if err := c.Start(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	fw.Delete(cm)
	adv5WaitFor(t, "the handler to be told ns/k is gone", func() bool { return deletions.Load() >= 1 })
	sentinel.after(t, c, 20*limiter.delay)
	if n := asked.Load(); n < 2 {
		t.Fatalf("the Gate was asked %d times of ns/k's absence, want the panicking pass's and its retry's", n)
	}
	if n := deletions.Load(); n != 1 {
		t.Fatalf("the handler was told %d times that ns/k is gone, want once", n)
	}
}

// TestAdv5ARateLimiterThatPanicsInADeletionPassKeepsItsRetry (issue 30,
// h30d's attack on h30b's safe limiter): every method of the kind's rate
// limiter panics, and the handler fails the first pass that tells it ns/k
// is gone. The retry's delay (When) and the error line's count
// (NumRequeues) panic, the default limiter answers, and the retry tells
// the handler again, which succeeds (Forget panics): told twice, the
// failed pass and its retry, and never again.
func TestAdv5ARateLimiterThatPanicsInADeletionPassKeepsItsRetry(t *testing.T) {
	limiter := &adv4PanickingLimiter{forgot: make(chan struct{})}
	var deletions atomic.Int32
	sentinel := newAdv5Sentinel()
	c, fw, cm := adv5DeletingController(t, &Options{RateLimiter: limiter}, func(key string, obj kruntime.Object) error {
		sentinel.seen(key)
		if key == "ns/k" && obj == nil && deletions.Add(1) == 1 {
			return errors.New("the handler fails the first pass of the deletion")
		}
		return nil
	})
	if err := c.Start(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	fw.Delete(cm)
	adv5WaitFor(t, "the retry of the failed deletion pass", func() bool { return deletions.Load() >= 2 })
	sentinel.after(t, c, time.Second)
	if limiter.when.Load() == 0 {
		t.Fatal("the failed pass never asked the limiter's When: the test did not test it")
	}
	if n := deletions.Load(); n != 2 {
		t.Fatalf("the handler was told %d times that ns/k is gone, want twice (the failed pass and its retry)", n)
	}
}
