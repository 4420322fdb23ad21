package cache_test

import (
	"errors"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestGetFullNotFoundNamesTheResource shows that GetFull's NotFound for an
// object the cache does not hold is the one the API server gives for it
// (`pods "x" not found`, with the resource and group in its details), for
// metadata-only kinds of the core and a named group and for a kind cached
// whole: callers match such errors by resource, as they do the API
// server's and a typed cache's.
func TestGetFullNotFoundNamesTheResource(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	deploymentGVK := appsv1.SchemeGroupVersion.WithKind("Deployment")
	f := newCacheFactory(t, cp.Config(), &cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns},
		Kinds: map[schema.GroupVersionKind]cache.KindOptions{
			podGVK:        {MetadataOnly: ptr.To(true)},
			deploymentGVK: {MetadataOnly: ptr.To(true)},
		}})
	for _, gvk := range []schema.GroupVersionKind{podGVK, deploymentGVK, configMapGVK} {
		if _, err := f.ForKind(gvk); err != nil {
			t.Fatal(err)
		}
	}
	startAndSync(t, f)

	k := kube(t)
	servers := map[schema.GroupVersionKind]error{}
	_, servers[podGVK] = k.CoreV1().Pods(ns).Get(t.Context(), "absent", metav1.GetOptions{})
	_, servers[deploymentGVK] = k.AppsV1().Deployments(ns).Get(t.Context(), "absent", metav1.GetOptions{})
	_, servers[configMapGVK] = k.CoreV1().ConfigMaps(ns).Get(t.Context(), "absent", metav1.GetOptions{})
	for gvk, want := range servers {
		_, got := f.GetFull(t.Context(), gvk, ns, "absent")
		var status apierrors.APIStatus
		if !apierrors.IsNotFound(got) || !errors.As(got, &status) {
			t.Fatalf("GetFull of an absent %s: %v, want NotFound", gvk.Kind, got)
		}
		d, wantD := status.Status().Details, want.(apierrors.APIStatus).Status().Details
		if got.Error() != want.Error() || d.Group != wantD.Group || d.Kind != wantD.Kind || d.Name != wantD.Name {
			t.Errorf("GetFull of an absent %s: %q (details %+v), the API server's: %q (details %+v)",
				gvk.Kind, got, d, want, wantD)
		}
	}
}

// TestGetFullOfAnotherNamespaceIsNotCovered shows that GetFull on a cache
// limited to one namespace, asked about an object of another, answers
// *cache.NotCoveredError and not NotFound: the cache knows nothing of that
// namespace, and the object there exists.
func TestGetFullOfAnotherNamespaceIsNotCovered(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	other := controlplanetest.Namespace(t, cp.Config())
	applyPod(t, other, "elsewhere", "first")
	f := newCacheFactory(t, cp.Config(), &cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns},
		Kinds: map[schema.GroupVersionKind]cache.KindOptions{podGVK: {MetadataOnly: ptr.To(true)}}})
	for _, gvk := range []schema.GroupVersionKind{podGVK, configMapGVK} {
		if _, err := f.ForKind(gvk); err != nil {
			t.Fatal(err)
		}
	}
	startAndSync(t, f)
	for _, gvk := range []schema.GroupVersionKind{podGVK, configMapGVK} {
		_, err := f.GetFull(t.Context(), gvk, other, "elsewhere")
		var notCovered *cache.NotCoveredError
		if !errors.As(err, &notCovered) || notCovered.Namespace != other || notCovered.Covered != ns {
			t.Errorf("GetFull of a %s in namespace %s, the cache covering %s: %v, want a *cache.NotCoveredError",
				gvk.Kind, other, ns, err)
		}
	}
}
