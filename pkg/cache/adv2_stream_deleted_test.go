package cache_test

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestAdv2StreamReadDoesNotAnswerWithWhatItsStreamSawDeleted: where the
// API server lacks watch-list (an aggregated or old one), the stream of
// initial events is a plain watch: the objects, then every change, until
// InitialEventsTimeout lets the informer list. The stream passes the
// changes on to the reflector (which collects them), and hands the adds to
// the handlers early; but GetStreamed (and so pkg/generic's typed Get and
// pkg/controller's passes before the sync) keeps answering with the object
// as it was first streamed: one the same stream has since reported
// deleted is answered as existing, one it has since reported changed is
// answered as it was. A controller's pass before the sync acts on an
// object the informer was told is gone.
func TestAdv2StreamReadDoesNotAnswerWithWhatItsStreamSawDeleted(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	createConfigMaps(t, ns, 0, 3)
	var hold atomic.Bool
	hold.Store(true)
	f := newCacheFactory(t, controlplanetest.WithoutWatchList(cp.Config(), hold.Load), &cache.SharedCacheFactoryOptions{
		// The stream must not be given up for a list while the test
		// reads it.
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
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	if err := f.Start(ctx); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, time.Minute, "the stream's 3 objects handed early", func() bool {
		return len(log.snapshot()) == 3
	})
	cms := kube(t).CoreV1().ConfigMaps(ns)
	if err := cms.Delete(t.Context(), "cm-0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	cm1, err := cms.Get(t.Context(), "cm-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm1.Data = map[string]string{"k": "changed"}
	if _, err := cms.Update(t.Context(), cm1, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Events of one watch come in order: once cm-3, created after the
	// delete and the update, is handed early, the stream has passed both.
	createConfigMaps(t, ns, 3, 4)
	controlplanetest.Eventually(t, time.Minute, "cm-3, created after the delete and the update, handed early", func() bool {
		return slices.Contains(log.snapshot(), "add cm-3 true")
	})
	reader := informer.(cache.StreamReader)
	obj, exists, synced, err := reader.GetStreamed(ns + "/cm-0")
	if synced {
		t.Fatal("synced while the stream was held: the test shows nothing")
	}
	if err != nil || exists {
		t.Errorf("GetStreamed(cm-0) before the sync = %v, exists %t, err %v; want a miss: the stream passed its deletion", nameOf(obj), exists, err)
	}
	obj, exists, _, err = reader.GetStreamed(ns + "/cm-1")
	if cm, ok := obj.(*corev1.ConfigMap); err != nil || !exists || !ok || cm.Data["k"] != "changed" {
		t.Errorf("GetStreamed(cm-1) before the sync = %+v, exists %t, err %v; want the changed object the stream passed", nameOf(obj), exists, err)
	}
	if informer.HasSynced() {
		t.Fatal("synced while the stream was held: the test shows nothing")
	}
}

// nameOf is obj's namespace/name, or <nil>.
func nameOf(obj any) string {
	if m, err := meta.Accessor(obj); err == nil {
		return m.GetNamespace() + "/" + m.GetName() + " (resourceVersion " + m.GetResourceVersion() + ")"
	}
	return fmt.Sprint(obj)
}
