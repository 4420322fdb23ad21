package controller_test

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestStartAgainAfterContextEnded is a replica losing and regaining
// leadership in one process: the factory is started, its context ends, and
// it is started again with a new context. The handler registered once (with
// a context that outlives both terms) must see objects created, changed and
// deleted while it was stopped and after the restart, and the cache must
// serve reads again.
func TestStartAgainAfterContextEnded(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	f := newFactory(t, cp.Config(), ns, setup{})
	c, rec := recordConfigMaps(t, f)

	first, cancel := context.WithCancel(context.Background())
	if err := f.Start(first, 2); err != nil {
		t.Fatal(err)
	}
	createCM(t, cp.Config(), ns, "before", map[string]string{"v": "1"})
	createCM(t, cp.Config(), ns, "doomed", map[string]string{"v": "1"})
	controlplanetest.Eventually(t, 30*time.Second, "first term", func() bool {
		a, _ := rec.seen(ns + "/before")
		b, _ := rec.seen(ns + "/doomed")
		return a != nil && b != nil
	})
	cancel()
	// Until the first term's informer has stopped it could itself deliver
	// the changes below, and the test would pass without the restart.
	controlplanetest.Eventually(t, 30*time.Second, "the first term's informer stopped", c.Informer().IsStopped)

	// While stopped: a change and a deletion the handler must catch up on.
	cms := kube(cp.Config()).CoreV1().ConfigMaps(ns)
	cm, err := cms.Get(t.Context(), "before", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["v"] = "2"
	if _, err := cms.Update(t.Context(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(t.Context(), "doomed", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	start(t, f, 2)
	controlplanetest.Eventually(t, 30*time.Second, "the change made while stopped", func() bool {
		cm, _ := rec.seen(ns + "/before")
		return cm != nil && cm.Data["v"] == "2"
	})
	controlplanetest.Eventually(t, 30*time.Second, "the deletion made while stopped", func() bool {
		cm, ok := rec.seen(ns + "/doomed")
		return ok && cm == nil
	})
	createCM(t, cp.Config(), ns, "after", map[string]string{"v": "1"})
	controlplanetest.Eventually(t, 30*time.Second, "an object created after the restart", func() bool {
		cm, _ := rec.seen(ns + "/after")
		return cm != nil
	})
	obj, ok, err := c.Informer().GetStore().GetByKey(ns + "/after")
	if err != nil || !ok || obj == nil {
		t.Fatalf("the cache does not serve objects created after the restart: %v %v", ok, err)
	}
	if _, ok, _ := c.Informer().GetStore().GetByKey(ns + "/doomed"); ok {
		t.Fatal("the cache still holds an object deleted while stopped")
	}
	if !c.Informer().HasSynced() {
		t.Fatal("the restarted informer does not report synced")
	}
}
