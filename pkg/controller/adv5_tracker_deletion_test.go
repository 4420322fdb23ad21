package controller

import (
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// TestAdv5ADeletionWhoseTrackerDonePanicsIsToldOnce (issue 30, h30d's
// attack on h30b's recovery of a PassTracker's panics): the handler is
// told that ns/k is gone and returns nil; then the done that the kind's
// DeletionTracker returned for that pass panics. h30b makes that panic
// the pass's error, which runs before the deletion path's check of the
// pass's error: the key is not marked told, and its retry tells the
// handler a second time that ns/k is gone, although the handler
// succeeded the first time. A deletion is told once (docs/safety.md);
// the panic of the code that watches the pass is not the handler's
// failure to be told.
func TestAdv5ADeletionWhoseTrackerDonePanicsIsToldOnce(t *testing.T) {
	limiter := &adv5Retry{delay: 50 * time.Millisecond}
	var deletions atomic.Int32
	tracker := &adv5DeletionTracker{}
	sentinel := newAdv5Sentinel()
	c, fw, cm := adv5DeletingController(t, &Options{Passes: tracker, Resource: adv4Resource, RateLimiter: limiter}, func(key string, obj kruntime.Object) error {
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
	adv5WaitFor(t, "the first deletion pass's done (which panics)", func() bool { return tracker.deletionDones.Load() >= 1 })
	// Its retry, if any, is asked for before the worker lets go of the
	// key (or has run already when the poll misses that moment).
	adv5WaitFor(t, "the first deletion pass to end (its worker released)", func() bool { return !adv5Busy(c) })
	if deletions.Load() == 0 {
		t.Fatal("the tracker's done of a deletion pass ran, but the handler was not told ns/k is gone")
	}
	// Due long after any retry the failed pass asked for.
	sentinel.after(t, c, 20*limiter.delay)
	if n := deletions.Load(); n != 1 {
		t.Fatalf("the handler was told %d times that ns/k is gone, want once: the first pass's handler returned nil, then the tracker's done panicked and the key was retried (%d retries asked)", n, limiter.retries.Load())
	}
}

// adv5DeletionTracker is a DeletionTracker whose done of the first pass
// of ns/k's absence panics.
type adv5DeletionTracker struct {
	deletionDones atomic.Int32
}

func (*adv5DeletionTracker) Handling(ObjectRef, string) func() { return func() {} }

func (d *adv5DeletionTracker) HandlingDeletion(ref ObjectRef) func() {
	if ref.Name != "k" {
		return func() {}
	}
	return func() {
		if d.deletionDones.Add(1) == 1 {
			panic("the tracker's done of the first deletion pass panics")
		}
	}
}

// adv5Busy says whether a worker of one of c's runs holds a key.
func adv5Busy(c *controller) bool {
	c.startLock.Lock()
	defer c.startLock.Unlock()
	for r := range c.runs {
		for _, w := range r.workers {
			w.mu.Lock()
			active := w.active
			w.mu.Unlock()
			if active {
				return true
			}
		}
	}
	return false
}

// adv5DeletingController is a controller with handler h over an informer
// whose list holds ConfigMaps ns/k and ns/s (a sentinel) and whose watch
// is the returned fake, so that the test can delete ns/k.
func adv5DeletingController(t *testing.T, opts *Options, h func(key string, obj kruntime.Object) error) (*controller, *watch.FakeWatcher, *corev1.ConfigMap) {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "k", ResourceVersion: "1"}}
	s := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "s", ResourceVersion: "1"}}
	fw := watch.NewFake()
	var watched atomic.Bool
	lw := &cache.ListWatch{
		ListFunc: func(metav1.ListOptions) (kruntime.Object, error) {
			return &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}, Items: []corev1.ConfigMap{*cm.DeepCopy(), *s.DeepCopy()}}, nil
		},
		WatchFunc: func(metav1.ListOptions) (watch.Interface, error) {
			if watched.Swap(true) {
				return watch.NewFake(), nil // a second watch: never in this test
			}
			return fw, nil
		},
	}
	informer := cache.NewSharedIndexInformer(adv3ListWatch{lw}, &corev1.ConfigMap{}, 0, cache.Indexers{})
	log := logrus.New()
	log.SetOutput(io.Discard)
	opts.Logger = log
	c, err := New("adv5", informer, HandlerFunc(h), opts)
	if err != nil {
		t.Fatal(err)
	}
	go informer.RunWithContext(t.Context())
	adv5WaitFor(t, "the informer to sync", informer.HasSynced)
	return c.(*controller), fw, cm
}

// adv5Sentinel arms a wait for a pass of ns/s asked for now: the returned
// seen is the handler's hook (call it with each key handled), and wait
// returns once a pass of ns/s ran after arm.
type adv5Sentinel struct {
	armed atomic.Bool
	ran   chan struct{}
	once  sync.Once
}

func newAdv5Sentinel() *adv5Sentinel { return &adv5Sentinel{ran: make(chan struct{})} }

func (s *adv5Sentinel) seen(key string) {
	if key == "ns/s" && s.armed.Load() {
		s.once.Do(func() { close(s.ran) })
	}
}

// after asks for a pass of ns/s after d and waits for it: with one worker,
// which ends a pass before it takes the next, and delayed keys handed out
// in the order they come due, every add due before it has run then.
func (s *adv5Sentinel) after(t *testing.T, c *controller, d time.Duration) {
	t.Helper()
	s.armed.Store(true)
	c.EnqueueAfter("ns", "s", d)
	select {
	case <-s.ran:
	case <-time.After(adv5Bound):
		t.Fatalf("waited %s and still not: the sentinel's pass", adv5Bound)
	}
}

// adv5Retry is a rate limiter that retries every failure after delay and
// counts the retries it was asked for.
type adv5Retry struct {
	delay   time.Duration
	retries atomic.Int32
}

func (f *adv5Retry) When(string) time.Duration { f.retries.Add(1); return f.delay }
func (f *adv5Retry) Forget(string)             {}
func (f *adv5Retry) NumRequeues(string) int    { return int(f.retries.Load()) }
