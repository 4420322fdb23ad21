package cache_test

import (
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"

	"github.com/lariat-dev/lariat/internal/testkinds"
	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controlplane"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestAdv5CompactCacheCatchesUpAcrossCutsAndCompaction: a compact cache
// reading from the wire, behind a proxy that cuts its connections, while
// a default cache watches directly. While cut: an update, a delete, a
// create, and an object deleted and created again under the same name
// with other data. First the cache resumes its watch from where it was
// (the API server still has that revision); then etcd is compacted while
// it is cut, its resumed watch is answered 410 Gone and it lists again
// (the API server runs without a watch cache, so the revision is gone for
// real). Both times the compact cache ends with exactly the default
// cache's objects, field for field, the recreated one included.
// ConfigMaps (protobuf) and unstructured Widgets (JSON).
func TestAdv5CompactCacheCatchesUpAcrossCutsAndCompaction(t *testing.T) {
	own := controlplanetest.Start(t, controlplane.Options{
		CRDDirs:        []string{testkinds.CRDDir()},
		APIServerFlags: []string{"--watch-cache=false"},
	})
	for _, gvk := range []schema.GroupVersionKind{configMapGVK, testkinds.WidgetGVK} {
		t.Run(gvk.Kind, func(t *testing.T) {
			resource := "configmaps"
			if gvk == testkinds.WidgetGVK {
				resource = testkinds.WidgetGVR.Resource
			}
			adv5CutAndCompact(t, own, gvk, resource)
		})
	}
}

func adv5CutAndCompact(t *testing.T, own *controlplane.ControlPlane, gvk schema.GroupVersionKind, resource string) {
	ns := controlplanetest.Namespace(t, own.Config())
	objects := dynamic.NewForConfigOrDie(own.Config()).Resource(gvk.GroupVersion().WithResource(resource)).Namespace(ns)
	note := 0
	write := func(name string) {
		t.Helper()
		note++
		o := testkinds.Object(gvk, ns, name)
		if gvk == testkinds.WidgetGVK {
			o = testkinds.Widget(ns, name, int64(note))
		} else {
			o.Object["data"] = map[string]any{"note": fmt.Sprint(note)}
		}
		o.SetLabels(map[string]string{"note": fmt.Sprint(note)})
		cur, err := objects.Get(t.Context(), name, metav1.GetOptions{})
		if err == nil {
			o.SetResourceVersion(cur.GetResourceVersion())
			_, err = objects.Update(t.Context(), o, metav1.UpdateOptions{})
		} else {
			_, err = objects.Create(t.Context(), o, metav1.CreateOptions{})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	remove := func(name string) {
		t.Helper()
		if err := objects.Delete(t.Context(), name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 4 {
		write(fmt.Sprintf("o-%d", i))
	}
	proxy, proxied := controlplanetest.NewProxy(t, own.Config())
	var in informers
	in.compactFactory = newCacheFactory(t, proxied, &cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns},
		Kinds: map[schema.GroupVersionKind]cache.KindOptions{gvk: {Compact: ptr.To(true), HotObjects: ptr.To(1)}}})
	in.plainFactory = newCacheFactory(t, own.Config(), &cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns}})
	var err error
	if in.compact, err = in.compactFactory.ForKind(gvk); err != nil {
		t.Fatal(err)
	}
	if in.plain, err = in.plainFactory.ForKind(gvk); err != nil {
		t.Fatal(err)
	}
	var relists atomic.Int64
	in.compact.(cache.RelistNotifier).OnRelisted(func() { relists.Add(1) })
	in.start(t)

	same := func(what string) {
		t.Helper()
		want := in.plain.GetStore().ListKeys()
		slices.Sort(want)
		controlplanetest.Eventually(t, time.Minute, what+": the compact cache to hold the default cache's objects", func() bool {
			got := in.compact.GetStore().ListKeys()
			slices.Sort(got)
			if !slices.Equal(got, want) {
				return false
			}
			for _, key := range want {
				p, _, _ := in.plain.GetStore().GetByKey(key)
				c, _, _ := in.compact.GetStore().GetByKey(key)
				if resourceVersionOf(p.(runtime.Object)) != resourceVersionOf(c.(runtime.Object)) {
					return false
				}
			}
			return true
		})
		for _, key := range want {
			got := in.sameAsPlain(t, key)
			if u, ok := got.(*unstructured.Unstructured); ok && u.GetManagedFields() != nil {
				t.Errorf("%s: %s has managedFields", what, key)
			}
			if cm, ok := got.(*corev1.ConfigMap); ok && cm.ManagedFields != nil {
				t.Errorf("%s: %s has managedFields", what, key)
			}
		}
	}
	// changes makes the cut's changes and waits until the default cache,
	// which is not cut, has them.
	changes := func(round int) {
		t.Helper()
		write("o-1")
		remove("o-2")
		write(fmt.Sprintf("new-%d", round))
		remove("o-0")
		write("o-0")
		controlplanetest.Eventually(t, time.Minute, "the changes in the default cache", func() bool {
			_, has2, _ := in.plain.GetStore().GetByKey(ns + "/o-2")
			_, has0, _ := in.plain.GetStore().GetByKey(ns + "/o-0")
			_, hasNew, _ := in.plain.GetStore().GetByKey(fmt.Sprintf("%s/new-%d", ns, round))
			return !has2 && has0 && hasNew
		})
	}

	wired := cache.WiredObjects(in.compact)
	proxy.Cut()
	changes(1)
	proxy.Restore()
	same("resumed")
	if n := cache.WiredObjects(in.compact) - wired; n < 4 {
		t.Errorf("resumed: %d objects read from the wire since the cut, want at least the 4 changes' ", n)
	}

	write("o-2")
	same("before the second cut")
	before := relists.Load()
	proxy.Cut()
	changes(2)
	e := &adv5Expirer{t: t, etcdURL: own.EtcdURL()}
	e.compact()
	proxy.Restore()
	controlplanetest.Eventually(t, time.Minute, "the compact cache to list again", func() bool { return relists.Load() > before })
	same("relisted")
}
