package controller_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// churnView is what a test handler keeps of one key: how many passes are
// in it now, the most that ever were, how many passes it had, and what its
// last successful pass was given ("" for nil).
type churnView struct {
	inFlight, maxInFlight, passes int
	last                          string
	lastSet                       bool
}

// churnViews are the views of a churn handler, by key.
type churnViews struct {
	mu    sync.Mutex
	views map[string]*churnView
}

// handler is a handler that keeps cv's views: it fails every third pass
// of a key, panics every fifth and asks enqueueAfter for the key every
// fourth.
func (cv *churnViews) handler(enqueueAfter func(ns, name string)) controller.HandlerFunc {
	return func(k string, obj runtime.Object) error {
		cv.mu.Lock()
		v := cv.views[k]
		if v == nil {
			v = &churnView{}
			cv.views[k] = v
		}
		v.inFlight++
		v.maxInFlight = max(v.maxInFlight, v.inFlight)
		v.passes++
		n := v.passes
		cv.mu.Unlock()
		defer func() {
			cv.mu.Lock()
			v.inFlight--
			cv.mu.Unlock()
		}()
		// Stay in the pass a little, so that other workers take keys
		// while it runs.
		time.Sleep(time.Millisecond)
		switch {
		case n%5 == 2:
			panic(fmt.Sprintf("pass %d of %s panics", n, k))
		case n%3 == 1:
			return errTransient
		case n%4 == 3:
			ns, name, _ := toolscache.SplitMetaNamespaceKey(k)
			enqueueAfter(ns, name)
		}
		cv.mu.Lock()
		v.last, v.lastSet = "", true
		if obj != nil {
			v.last = obj.(*corev1.ConfigMap).Data["v"]
		}
		cv.mu.Unlock()
		return nil
	}
}

// TestAdv1ManyWorkersOnFewKeysNeverOverlapAndConverge: a controller of one
// handler (the fast path of 43aadcf: its passes are claimed under the
// handler's name, no Gate, not shared) with six workers over four keys
// that are created, updated, deleted and created again under the same
// names while the handler fails every third pass, panics every fifth and
// asks for an EnqueueAfter of its key every fourth. No key ever has two
// passes at once, and once the churn stops each key's last successful
// pass saw its final state (the object's last data, or nil for one left
// deleted).
func TestAdv1ManyWorkersOnFewKeysNeverOverlapAndConverge(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	f := newFactory(t, cp.Config(), ns, setup{})
	caches := f.SharedCacheFactory()
	informer, err := caches.ForKind(configMapGVK)
	if err != nil {
		t.Fatal(err)
	}
	cv := &churnViews{views: map[string]*churnView{}}
	var c controller.Controller
	c, err = controller.New("churn", informer, cv.handler(func(ns, name string) { c.EnqueueAfter(ns, name, 3*time.Millisecond) }),
		&controller.Options{Logger: controlplanetest.QuietLogger(), RateLimiter: &fixedRetry{delay: 5 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	if err := caches.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := c.Start(t.Context(), 6); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, 30*time.Second, "the informer synced", informer.HasSynced)
	cms := kube(cp.Config()).CoreV1().ConfigMaps(ns)
	names := []string{"k0", "k1", "k2", "k3"}
	put, del := churnWriters(t, cms)
	for round := range 12 {
		for i, name := range names {
			put(name, fmt.Sprint(round))
			if (round+i)%3 == 0 {
				del(name)
				put(name, fmt.Sprintf("%d-again", round)) // created again under the name
			}
			if (round+i)%4 == 1 {
				c.Enqueue(ns, name)
			}
		}
	}
	want := map[string]string{"k0": "final", "k1": "final"}
	put("k0", "final")
	put("k1", "final")
	del("k2")
	del("k3")
	controlplanetest.Eventually(t, 60*time.Second, "each key's last successful pass saw its final state", func() bool {
		cv.mu.Lock()
		defer cv.mu.Unlock()
		for _, name := range names {
			v := cv.views[ns+"/"+name]
			if v == nil || !v.lastSet || v.last != want[name] {
				return false
			}
		}
		return true
	})
	cv.mu.Lock()
	defer cv.mu.Unlock()
	for _, name := range names {
		v := cv.views[ns+"/"+name]
		t.Logf("%s: %d passes", name, v.passes)
		if v.maxInFlight != 1 {
			t.Errorf("%s had %d passes at once, want 1 (%d passes)", name, v.maxInFlight, v.passes)
		}
	}
}

// churnWriters returns functions that set a ConfigMap's "v" (creating it
// when absent) and delete one (absent or not), failing t on any other
// error.
func churnWriters(t *testing.T, cms typedcorev1.ConfigMapInterface) (put func(name, val string), del func(name string)) {
	put = func(name, val string) {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"v": val}}
		if _, err := cms.Update(t.Context(), cm, metav1.UpdateOptions{}); apierrors.IsNotFound(err) {
			_, err = cms.Create(t.Context(), cm, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
		} else if err != nil {
			t.Fatal(err)
		}
	}
	del = func(name string) {
		if err := cms.Delete(t.Context(), name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
	}
	return put, del
}
