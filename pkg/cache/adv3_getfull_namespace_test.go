package cache_test

import (
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestAdv3GetFullOfAnUncoveredNamespaceIsNotNotFound: a cache limited to
// one namespace knows nothing of the others, and Lariat's cached reads
// say so (a *cache.NotCoveredError, pkg/generic's typed Get and List)
// rather than answer NotFound. GetFull answers NotFound for an object
// that exists in another namespace: a handler reading a related object
// (GetFull is for exactly that) takes it as deleted.
func TestAdv3GetFullOfAnUncoveredNamespaceIsNotNotFound(t *testing.T) {
	covered := controlplanetest.Namespace(t, cp.Config())
	other := controlplanetest.Namespace(t, cp.Config())
	applyConfigMap(t, other, "there", nil)
	for _, metadataOnly := range []bool{true, false} {
		f := newCacheFactory(t, cp.Config(), &cache.SharedCacheFactoryOptions{
			Default: cache.Options{Namespace: covered},
			Kinds:   map[schema.GroupVersionKind]cache.KindOptions{configMapGVK: {MetadataOnly: ptr.To(metadataOnly)}},
		})
		if _, err := f.ForKind(configMapGVK); err != nil {
			t.Fatal(err)
		}
		startAndSync(t, f)
		_, err := f.GetFull(t.Context(), configMapGVK, other, "there")
		var notCovered *cache.NotCoveredError
		if apierrors.IsNotFound(err) || !errors.As(err, &notCovered) {
			t.Errorf("GetFull (metadata-only %v) of %s/there, which exists, from a cache of namespace %s only: %v, want a *cache.NotCoveredError",
				metadataOnly, other, covered, err)
		}
	}
}
