package generic_test

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/generic"
)

// TestAdv3TypedIndexOfMetadataOnlyKindIsNotReadAsEmpty: a typed cache
// (generic.NewInformerCache) over a metadata-only kind's informer cannot
// answer with objects of its type. Its Get says so (the cache holds a
// *metav1.PartialObjectMetadata), but a typed index added to it indexes
// nothing, silently, and GetByIndex then answers "none" for a key the
// cached objects have: a partial view read as "nothing exists".
func TestAdv3TypedIndexOfMetadataOnlyKindIsNotReadAsEmpty(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	cmGVK := corev1.SchemeGroupVersion.WithKind("ConfigMap")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: ns, Labels: map[string]string{"app": "a"}}}
	if _, err := kubernetes.NewForConfigOrDie(cp.Config()).CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	f, err := generic.NewFactoryFromConfig(cp.Config(), nil, &generic.FactoryOptions{
		Cache: cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns}, SyncTimeout: time.Minute,
			Kinds: map[schema.GroupVersionKind]cache.KindOptions{cmGVK: {MetadataOnly: ptr.To(true)}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	informer, err := f.ControllerFactory().SharedCacheFactory().ForKind(cmGVK)
	if err != nil {
		t.Fatal(err)
	}
	typed := generic.NewInformerCache[*corev1.ConfigMap](informer, schema.GroupResource{Resource: "configmaps"})
	if err := typed.AddIndexer("byApp", func(cm *corev1.ConfigMap) ([]string, error) {
		return []string{cm.Labels["app"]}, nil
	}); err != nil {
		// Refusing the typed index is a right answer, if it says why.
		if !strings.Contains(err.Error(), "metadata-only") {
			t.Errorf("AddIndexer refused without naming the metadata-only cache: %v", err)
		}
		return
	}
	ctx := t.Context()
	if err := f.Start(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WaitForCacheSync(ctx); err != nil {
		t.Fatal(err)
	}
	if keys := informer.GetStore().ListKeys(); len(keys) != 1 {
		t.Fatalf("the metadata-only cache holds %v, want %s/cm", keys, ns)
	}
	if _, err := typed.Get(ns, "cm"); err == nil {
		t.Errorf("typed Get of %s/cm from a metadata-only cache succeeded", ns)
	}
	got, err := typed.GetByIndex("byApp", "a")
	if err == nil && len(got) == 0 {
		t.Errorf("typed GetByIndex(byApp, a) answered no ConfigMap and no error; the cache holds %s/cm with app=a (only its metadata)", ns)
	}
}
