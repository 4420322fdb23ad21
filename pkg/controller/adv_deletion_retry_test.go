package controller_test

import (
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestRetryPendingWhenTheDeletionComesDoesNotTellItAgain: a handler fails
// on an object (its retry waits in the queue's delay heap); the object is
// deleted meanwhile, and the deletion's pass tells the handlers it is gone
// and they return nil. The retry, still pending, runs later and tells the
// handlers a second time that the object is gone: the retry is not a
// deletion event, so nothing (knownKeys, AddUnlessUnread) stands in its way,
// and without a Gate a pass of an absent key that is no longer known still
// calls the handlers with nil.
func TestRetryPendingWhenTheDeletionComesDoesNotTellItAgain(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	key := ns + "/retried"
	f := newFactory(t, cp.Config(), ns, setup{})
	caches := f.SharedCacheFactory()
	informer, err := caches.ForKind(configMapGVK)
	if err != nil {
		t.Fatal(err)
	}
	limiter := &fixedRetry{delay: 2 * time.Second}
	cms := kube(cp.Config()).CoreV1().ConfigMaps(ns)
	rec := newRecorder()
	var nilPasses, failed atomic.Int32
	c, err := controller.New("retry-then-delete", informer, controller.HandlerFunc(func(k string, obj runtime.Object) error {
		if k == key && obj == nil {
			nilPasses.Add(1)
		}
		if k == key && obj != nil && failed.Add(1) == 1 {
			// The object goes while its pass fails: its deletion is
			// queued behind this pass, its retry after it.
			if err := cms.Delete(t.Context(), "retried", metav1.DeleteOptions{}); err != nil {
				t.Error(err)
			}
			waitGoneFromStore(t, informer.GetStore(), key)
			_, _ = rec.OnChange(k, obj)
			return errTransient
		}
		_, err := rec.OnChange(k, obj)
		return err
	}), &controller.Options{Logger: controlplanetest.QuietLogger(), RateLimiter: limiter})
	if err != nil {
		t.Fatal(err)
	}
	if err := caches.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := c.Start(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "retried"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, 30*time.Second, "the handler is told retried is gone", func() bool {
		return nilPasses.Load() >= 1
	})
	if limiter.retries.Load() != 1 {
		t.Fatalf("the failed pass asked for %d retries, want 1", limiter.retries.Load())
	}
	// The queue hands out delayed keys in order of their ready time, and
	// one worker ends a pass before it takes the next key: once the
	// sentinel, ready after the retry, is handled, the retry has run.
	c.EnqueueAfter(ns, "sentinel", 2*limiter.delay)
	controlplanetest.Eventually(t, 30*time.Second, "the handler reaches the sentinel", func() bool {
		_, ok := rec.seen(ns + "/sentinel")
		return ok
	})
	if n := nilPasses.Load(); n != 1 {
		t.Fatalf("the handler was told %d times that retried is gone, want once; keys handled: %v", n, rec.order())
	}
}
