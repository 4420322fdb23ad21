package controller_test

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestAdv1AStuckHandlerOfALoneControllerIsNamedByWait: a controller of one
// handler (no Gate, no PassTracker, not shared) claims its passes under
// the handler's name and no longer names it as the handler starts
// (43aadcf). A handler of it stuck in a pass of an object, and another
// stuck telling that an object is gone, past the stop grace period, are
// both named by Wait's StillRunningError, by key and handler.
func TestAdv1AStuckHandlerOfALoneControllerIsNamedByWait(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	f := newFactory(t, cp.Config(), ns, setup{})
	caches := f.SharedCacheFactory()
	informer, err := caches.ForKind(configMapGVK)
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	defer close(release)
	stuckObj, stuckGone := make(chan struct{}), make(chan struct{})
	c, err := controller.New("lone", informer, controller.HandlerFunc(func(k string, obj runtime.Object) error {
		switch {
		case k == ns+"/stuck" && obj != nil:
			close(stuckObj)
		case k == ns+"/ghost" && obj == nil:
			close(stuckGone)
		default:
			return nil
		}
		<-release
		return nil
	}), &controller.Options{Logger: controlplanetest.QuietLogger(), StopGrace: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := caches.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	if err := c.Start(ctx, 2); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, 30*time.Second, "the informer synced", informer.HasSynced)
	// ghost was never created: an Enqueue of it gives the handler nil.
	c.Enqueue(ns, "ghost")
	waitClosed(t, stuckGone, "the handler is told ghost is absent")
	cms := kube(cp.Config()).CoreV1().ConfigMaps(ns)
	if _, err := cms.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "stuck"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, stuckObj, "the handler is given stuck")
	cancel()
	waitCtx, done := context.WithTimeout(t.Context(), hookBound)
	defer done()
	err = c.(controller.Waiter).Wait(waitCtx)
	var still *controller.StillRunningError
	if !errors.As(err, &still) {
		t.Fatalf("Wait = %v, want a *StillRunningError naming the two stuck passes", err)
	}
	got := map[string]string{}
	for _, h := range still.Handlers {
		got[h.Key] = h.Handler
	}
	want := map[string]string{ns + "/stuck": "lone", ns + "/ghost": "lone"}
	if len(got) != len(want) || got[ns+"/stuck"] != "lone" || got[ns+"/ghost"] != "lone" {
		t.Fatalf("Wait named %v, want %v (%v)", got, want, err)
	}
}
