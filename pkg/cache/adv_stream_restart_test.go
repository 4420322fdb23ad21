package cache_test

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestAdvStreamDeletedWhileStoppedMidStreamIsHandedAsDeleted: a replica
// loses leadership while its first list streams (the factory is stopped
// before the sync), after the handlers were given the stream's first
// objects. One of them is deleted while the replica is stopped. The
// replica gains leadership again: its rebuilt informer lists, and syncs
// without the deleted object. The handler, which was told the object
// exists, must be told it is gone. Before the fix it was never told (the
// early handler kept it as "given" and flushed it only on the next
// unrelated event, and only a first run flushed at its sync).
func TestAdvStreamDeletedWhileStoppedMidStreamIsHandedAsDeleted(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	createConfigMaps(t, ns, 0, 3)
	var hold atomic.Bool
	hold.Store(true)
	f := newCacheFactory(t, controlplanetest.WithoutWatchList(cp.Config(), hold.Load), &cache.SharedCacheFactoryOptions{
		// The held stream must not be given up for a list while the
		// test holds it.
		Default: cache.Options{Namespace: ns, StreamInitialList: true, InitialEventsTimeout: time.Hour},
	})
	informer, err := f.ForKind(configMapGVK)
	if err != nil {
		t.Fatal(err)
	}
	log := &streamLog{}
	if _, err := informer.AddEventHandler(log.handler(informer)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("handler given %v", log.snapshot())
		}
	})
	ctx1, stop1 := context.WithCancel(t.Context())
	if err := f.Start(ctx1); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, time.Minute, "the stream's objects handed before the sync", func() bool {
		return len(log.snapshot()) == 3
	})
	if informer.HasSynced() {
		t.Fatal("synced while the stream was held: the test shows nothing")
	}
	stop1() // leadership lost before the sync
	if err := kube(t).CoreV1().ConfigMaps(ns).Delete(t.Context(), "cm-0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	hold.Store(false)
	startSynced(t, f) // leadership regained
	if _, ok, _ := informer.GetStore().GetByKey(ns + "/cm-0"); ok {
		t.Fatal("the synced store holds the deleted cm-0")
	}
	controlplanetest.Eventually(t, time.Minute, "cm-0, handed early and deleted, handed as deleted", func() bool {
		return slices.Contains(log.snapshot(), "delete cm-0")
	})
}
