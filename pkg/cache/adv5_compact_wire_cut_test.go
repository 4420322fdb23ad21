package cache_test

import (
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	toolscache "k8s.io/client-go/tools/cache"

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
	own := adv5OwnControlPlane(t)
	for _, gvk := range []schema.GroupVersionKind{configMapGVK, testkinds.WidgetGVK} {
		t.Run(gvk.Kind, func(t *testing.T) { adv5CutAndCompact(t, own, gvk) })
	}
}

// adv5Writer writes objects of one kind in one namespace, each write with
// a new note (in its data or spec and in its labels).
type adv5Writer struct {
	t       *testing.T
	gvk     schema.GroupVersionKind
	ns      string
	objects dynamic.ResourceInterface
	note    int
}

// write creates name, or updates it when it exists.
func (w *adv5Writer) write(name string) {
	w.t.Helper()
	w.note++
	o := adv5Object(w.gvk, w.ns, name, int64(w.note), map[string]string{"note": fmt.Sprint(w.note)})
	cur, err := w.objects.Get(w.t.Context(), name, metav1.GetOptions{})
	if err == nil {
		o.SetResourceVersion(cur.GetResourceVersion())
		_, err = w.objects.Update(w.t.Context(), o, metav1.UpdateOptions{})
	} else {
		_, err = w.objects.Create(w.t.Context(), o, metav1.CreateOptions{})
	}
	if err != nil {
		w.t.Fatal(err)
	}
}

func (w *adv5Writer) remove(name string) {
	w.t.Helper()
	if err := w.objects.Delete(w.t.Context(), name, metav1.DeleteOptions{}); err != nil {
		w.t.Fatal(err)
	}
}

// cutChanges makes the changes of a cut (an update, a delete, a create,
// and o-0 deleted and created again) and waits until plain, which is not
// cut, has them.
func (w *adv5Writer) cutChanges(plain toolscache.SharedIndexInformer, round int) {
	w.t.Helper()
	w.write("o-1")
	w.remove("o-2")
	w.write(fmt.Sprintf("new-%d", round))
	w.remove("o-0")
	w.write("o-0")
	controlplanetest.Eventually(w.t, time.Minute, "the changes in the default cache", func() bool {
		_, has2, _ := plain.GetStore().GetByKey(w.ns + "/o-2")
		_, has0, _ := plain.GetStore().GetByKey(w.ns + "/o-0")
		_, hasNew, _ := plain.GetStore().GetByKey(fmt.Sprintf("%s/new-%d", w.ns, round))
		return !has2 && has0 && hasNew
	})
}

// adv5AllSameAsPlain fails the test unless the compact cache comes to hold
// exactly the default cache's objects, at their versions, field for field
// and without managedFields.
func adv5AllSameAsPlain(t *testing.T, in informers, what string) {
	t.Helper()
	var want []string
	controlplanetest.Eventually(t, time.Minute, what+": the compact cache to hold the default cache's objects", func() bool {
		// Both caches are read each time: either may be the one still
		// behind the last write (a list of the default cache's keys taken
		// once, before it saw the write, was never matched).
		want = in.plain.GetStore().ListKeys()
		slices.Sort(want)
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
		if adv5HasManagedFields(in.sameAsPlain(t, key)) {
			t.Errorf("%s: %s has managedFields", what, key)
		}
	}
}

func adv5CutAndCompact(t *testing.T, own *controlplane.ControlPlane, gvk schema.GroupVersionKind) {
	ns := controlplanetest.Namespace(t, own.Config())
	w := &adv5Writer{t: t, gvk: gvk, ns: ns,
		objects: dynamic.NewForConfigOrDie(own.Config()).Resource(gvk.GroupVersion().WithResource(adv5Resource(gvk))).Namespace(ns)}
	for i := range 4 {
		w.write(fmt.Sprintf("o-%d", i))
	}
	proxy, proxied := controlplanetest.NewProxy(t, own.Config())
	in := adv5InformersThrough(t, proxied, own.Config(), ns, gvk, false)
	var relists atomic.Int64
	in.compact.(cache.RelistNotifier).OnRelisted(func() { relists.Add(1) })
	in.start(t)

	wired := cache.WiredObjects(in.compact)
	proxy.Cut()
	w.cutChanges(in.plain, 1)
	proxy.Restore()
	adv5AllSameAsPlain(t, in, "resumed")
	if n := cache.WiredObjects(in.compact) - wired; n < 4 {
		t.Errorf("resumed: %d objects read from the wire since the cut, want at least the 4 changes'", n)
	}

	w.write("o-2")
	adv5AllSameAsPlain(t, in, "before the second cut")
	before := relists.Load()
	proxy.Cut()
	w.cutChanges(in.plain, 2)
	adv5CompactEtcd(t, own.EtcdURL())
	proxy.Restore()
	controlplanetest.Eventually(t, time.Minute, "the compact cache to list again", func() bool { return relists.Load() > before })
	adv5AllSameAsPlain(t, in, "relisted")
}
