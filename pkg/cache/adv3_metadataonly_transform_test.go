package cache_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestAdv3MetadataOnlySetTransformKeepsTheKind: a metadata-only cache
// promises objects stamped with the kind's apiVersion and kind (owner
// lookups and pkg/apply tell kinds apart by them), and a kind's Transform
// (Options) runs after the stamp. A transform set on the informer itself
// (SetTransform, as client-go users do) replaces the whole chain, stamp
// included: the cache then holds objects that say they are
// meta.k8s.io/v1 PartialObjectMetadata.
func TestAdv3MetadataOnlySetTransformKeepsTheKind(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	applyConfigMap(t, ns, "cm", map[string]string{"app": "a"})
	f := newCacheFactory(t, cp.Config(), &cache.SharedCacheFactoryOptions{
		Default: cache.Options{Namespace: ns},
		Kinds:   map[schema.GroupVersionKind]cache.KindOptions{configMapGVK: {MetadataOnly: ptr.To(true)}},
	})
	informer, err := f.ForKind(configMapGVK)
	if err != nil {
		t.Fatal(err)
	}
	if err := informer.SetTransform(cache.StripMetadata); err != nil {
		t.Fatal(err)
	}
	startAndSync(t, f)
	obj := get(t, informer, ns+"/cm")
	p, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		t.Fatalf("the metadata-only cache holds a %T", obj)
	}
	if got := p.GroupVersionKind(); got != corev1.SchemeGroupVersion.WithKind("ConfigMap") {
		t.Errorf("the metadata-only cache of ConfigMaps holds %s/cm as %s, not v1 ConfigMap", ns, got)
	}
}
