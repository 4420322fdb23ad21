package generic_test

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/generic"
)

// TestTypedControllerOfMetadataOnlyKindIsRefused shows that a typed
// controller of a kind the cache holds metadata of only is refused when it
// is made, naming the kind and the way out, rather than handing its
// handlers objects without spec; other kinds of the factory are unaffected.
func TestTypedControllerOfMetadataOnlyKindIsRefused(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	cmGVK := corev1.SchemeGroupVersion.WithKind("ConfigMap")
	f, err := generic.NewFactoryFromConfig(cp.Config(), nil, &generic.FactoryOptions{
		Cache: cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns}, SyncTimeout: time.Minute,
			Kinds: map[schema.GroupVersionKind]cache.KindOptions{cmGVK: {MetadataOnly: ptr.To(true)}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = generic.NewController[*corev1.ConfigMap, *corev1.ConfigMapList](cmGVK, "configmaps", true, f.ControllerFactory())
	if err == nil || !strings.Contains(err.Error(), "MetadataOnly") || !strings.Contains(err.Error(), "ConfigMap") {
		t.Fatalf("typed controller of a metadata-only kind: %v, want a refusal naming the kind and MetadataOnly", err)
	}
	secretGVK := corev1.SchemeGroupVersion.WithKind("Secret")
	if _, err := generic.NewController[*corev1.Secret, *corev1.SecretList](secretGVK, "secrets", true, f.ControllerFactory()); err != nil {
		t.Fatalf("typed controller of another kind: %v", err)
	}
}
