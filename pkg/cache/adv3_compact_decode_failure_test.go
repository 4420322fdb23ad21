package cache_test

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"

	"github.com/lariat-dev/lariat/internal/testkinds"
	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestAdv3CompactCacheOfTrimmedObjectsIsNotEmpty: a kind's Transform may
// trim what the cache holds (here: a custom resource kept as metadata and
// spec only, a common way to hold less). The default cache holds such
// objects and hands them out. A compact cache encodes them, but cannot
// decode an unstructured object without its kind: its store's List then
// answers an empty list (one object it cannot decode empties the whole
// answer), Get fails, and handlers are never given the objects; a partial
// view read as "nothing exists".
func TestAdv3CompactCacheOfTrimmedObjectsIsNotEmpty(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	widgets := dynamic.NewForConfigOrDie(cp.Config()).Resource(testkinds.WidgetGVR).Namespace(ns)
	for i := range 2 {
		if _, err := widgets.Create(t.Context(), testkinds.Widget(ns, fmt.Sprintf("w-%d", i), int64(i)), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	trim := func(obj any) (any, error) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return obj, nil
		}
		return &unstructured.Unstructured{Object: map[string]any{"metadata": u.Object["metadata"], "spec": u.Object["spec"]}}, nil
	}
	var in informers
	in.compactFactory = newCacheFactory(t, cp.Config(), &cache.SharedCacheFactoryOptions{
		Default: cache.Options{Namespace: ns, Transform: trim},
		Kinds:   map[schema.GroupVersionKind]cache.KindOptions{testkinds.WidgetGVK: {Compact: ptr.To(true)}},
	})
	in.plainFactory = newCacheFactory(t, cp.Config(), &cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns, Transform: trim}})
	var err error
	if in.compact, err = in.compactFactory.ForKind(testkinds.WidgetGVK); err != nil {
		t.Fatal(err)
	}
	if in.plain, err = in.plainFactory.ForKind(testkinds.WidgetGVK); err != nil {
		t.Fatal(err)
	}
	log := newEventLog()
	if _, err := in.compact.AddEventHandler(log.handler(&unstructured.Unstructured{})); err != nil {
		t.Fatal(err)
	}
	in.start(t)
	if n := len(in.plain.GetStore().List()); n != 2 {
		t.Fatalf("the default cache lists %d widgets, want 2 (the premise)", n)
	}
	if n := len(in.compact.GetStore().List()); n != 2 {
		t.Errorf("the compact cache's store lists %d widgets; the default cache, with the same Transform, lists 2", n)
	}
	if _, _, err := in.compact.GetStore().GetByKey(ns + "/w-0"); err != nil {
		t.Errorf("Get of %s/w-0 from the compact cache: %v", ns, err)
	}
	controlplanetest.Eventually(t, 30*time.Second, "the compact cache's handler given both widgets", func() bool {
		log.mu.Lock()
		defer log.mu.Unlock()
		return len(log.adds) == 2
	})
}
