package controller

import (
	"context"
	"io"
	"runtime"
	"testing"
	"time"
	"weak"

	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// TestAdv3AnEndedRunIsNotHeldByTheRunsAfterIt restarts a controller three
// times, each while the run before it is still stopping (its handler stuck
// in a pass of the one key past the stop), which makes each new run list
// the one before it in its older runs (issue 30, h30z's per-worker pass
// records). Once a run's workers have all returned it can never hold a key
// again, so nothing should keep it: the test waits for the first two runs
// to end and then checks that the garbage collector frees them while the
// third runs. A run that stays reachable keeps its queue, context and
// worker records, and a chain of restarts keeps every run it ever had.
func TestAdv3AnEndedRunIsNotHeldByTheRunsAfterIt(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	c := adv3Controller(t, func() {
		entered <- struct{}{}
		<-release
	})
	var (
		gone    []weak.Pointer[run]
		dones   []chan struct{}
		cancels []context.CancelFunc
	)
	for i := range 3 {
		ctx, cancel := context.WithCancel(t.Context())
		t.Cleanup(cancel)
		cancels = append(cancels, cancel)
		if i > 0 {
			cancels[i-1]() // the run before is stopping, its pass stuck
		}
		ptr, done := adv3Start(t, c, ctx)
		gone, dones = append(gone, ptr), append(dones, done)
		if i > 0 {
			release <- struct{}{} // the stuck pass of the run before ends
			waitChan(t, dones[i-1], "the run before to end")
		}
		// This run's pass of the key (queued at its start, or again once
		// the run before released it) is under way and stuck.
		waitChan(t, entered, "the new run's pass of the key")
	}
	t.Cleanup(func() { close(release) })

	for i, p := range gone[:2] {
		if !adv3Collected(p) {
			t.Errorf("run %d ended (its workers returned) but is still reachable while run 3 runs: run 3's older runs keep it, and each run keeps the ones before it", i+1)
		}
	}
}

// adv3Start starts c with one worker under ctx and returns a weak pointer
// to the new run and the channel closed when it ends.
func adv3Start(t *testing.T, c *controller, ctx context.Context) (weak.Pointer[run], chan struct{}) {
	t.Helper()
	c.startLock.Lock()
	before := map[*run]bool{}
	for r := range c.runs {
		before[r] = true
	}
	c.startLock.Unlock()
	if err := c.Start(ctx, 1); err != nil {
		t.Fatal(err)
	}
	c.startLock.Lock()
	defer c.startLock.Unlock()
	for r := range c.runs {
		if !before[r] {
			return weak.Make(r), r.done
		}
	}
	t.Fatal("Start added no run")
	return weak.Pointer[run]{}, nil
}

// adv3Collected runs the garbage collector until p's run is freed, a few
// times (a finalizer-free object goes in one cycle; the rest is slack).
func adv3Collected(p weak.Pointer[run]) bool {
	for range 10 {
		runtime.GC()
		if p.Value() == nil {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

// adv3Controller is a controller with handler h for "ns/k" over an
// informer, run until the test ends, whose store holds ConfigMap ns/k.
func adv3Controller(t *testing.T, h func()) *controller {
	t.Helper()
	lw := &cache.ListWatch{
		ListFunc: func(metav1.ListOptions) (kruntime.Object, error) {
			cm := corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "k", ResourceVersion: "1"}}
			return &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}, Items: []corev1.ConfigMap{cm}}, nil
		},
		WatchFunc: func(metav1.ListOptions) (watch.Interface, error) { return watch.NewFake(), nil },
	}
	informer := cache.NewSharedIndexInformer(adv3ListWatch{lw}, &corev1.ConfigMap{}, 0, cache.Indexers{})
	log := logrus.New()
	log.SetOutput(io.Discard)
	c, err := New("adv3", informer, HandlerFunc(func(key string, obj kruntime.Object) error {
		if key == "ns/k" && obj != nil {
			h()
		}
		return nil
	}), &Options{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	go informer.RunWithContext(t.Context())
	return c.(*controller)
}

// adv3ListWatch lists and watches with lw and tells the reflector that it
// does not stream its list (a fake watch sends no bookmark).
type adv3ListWatch struct{ *cache.ListWatch }

func (adv3ListWatch) IsWatchListSemanticsUnSupported() bool { return true }
