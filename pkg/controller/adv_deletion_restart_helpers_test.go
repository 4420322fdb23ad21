package controller_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// restartWhileTelling plays the restart the deletion tests share: c runs,
// ns/doomed is created, seen and deleted; once c's handler is in its pass
// telling doomed is gone (inPass closed, the handler held), c is stopped
// and started again, and it returns once the new run has compared its
// store with the keys it knows (a key enqueued after its start is handled:
// it compares before its workers start).
func restartWhileTelling(t *testing.T, c controller.Controller, caches *cache.SharedCacheFactory, rec *recorder, ns string, inPass <-chan struct{}) {
	t.Helper()
	if err := caches.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	first, stopFirst := context.WithCancel(t.Context())
	defer stopFirst()
	if err := c.Start(first, 1); err != nil {
		t.Fatal(err)
	}
	cms := kube(cp.Config()).CoreV1().ConfigMaps(ns)
	if _, err := cms.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "doomed"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, 30*time.Second, "the handler sees doomed", func() bool {
		cm, _ := rec.seen(ns + "/doomed")
		return cm != nil
	})
	if err := cms.Delete(t.Context(), "doomed", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, inPass, "the handler is told doomed is gone")
	stopFirst()
	if err := c.Start(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	handleInTurn(t, c, rec, ns, "after-the-restart")
}

// handleInTurn enqueues each of names in ns in turn and waits until the
// handler reached it: with one worker, FIFO within a priority, every key
// queued before it has been handled by then.
func handleInTurn(t *testing.T, c controller.Controller, rec *recorder, ns string, names ...string) {
	t.Helper()
	for _, name := range names {
		c.Enqueue(ns, name)
		controlplanetest.Eventually(t, 30*time.Second, "the handler reaches "+name, func() bool {
			_, ok := rec.seen(ns + "/" + name)
			return ok
		})
	}
}
