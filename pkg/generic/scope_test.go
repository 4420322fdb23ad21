package generic_test

import (
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestCacheOutsideItsNamespaceIsNotReadAsEmpty: a cache limited to one
// namespace knows nothing of the others, so a Get or List of another
// namespace fails with a *cache.NotCoveredError naming both namespaces,
// never a NotFound or an empty list that says nothing exists there; reads
// of its own namespace, and List of all namespaces (what it covers), answer
// as usual.
func TestCacheOutsideItsNamespaceIsNotReadAsEmpty(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	other := controlplanetest.Namespace(t, cp.Config())
	createCM(t, ns, "mine")
	createCM(t, other, "theirs")
	f := newFactory(t, cp.Config(), ns)
	cms := newConfigMaps(t, f)
	start(t, f)
	c := cms.Cache()
	controlplanetest.Eventually(t, timeout, "the cache of "+ns, func() bool {
		_, err := c.Get(ns, "mine")
		return err == nil
	})

	var notCovered *cache.NotCoveredError
	_, err := c.Get(other, "theirs")
	if !errors.As(err, &notCovered) || apierrors.IsNotFound(err) {
		t.Fatalf("Get of an object in another namespace: %v, want a *cache.NotCoveredError", err)
	}
	if notCovered.Namespace != other || notCovered.Covered != ns || notCovered.Resource.Resource != "configmaps" {
		t.Fatalf("NotCoveredError %+v, want namespace %s, covered %s, configmaps", notCovered, other, ns)
	}
	if got, err := c.List(other, nil); !errors.As(err, &notCovered) {
		t.Fatalf("List of another namespace: %d objects, %v, want a *cache.NotCoveredError", len(got), err)
	}
	if _, err := c.Get(ns, "missing"); !apierrors.IsNotFound(err) {
		t.Fatalf("Get of a missing object in the cache's namespace: %v, want NotFound", err)
	}
	if got, err := c.List(metav1.NamespaceAll, nil); err != nil || len(got) != 1 || got[0].Name != "mine" {
		t.Fatalf("List of all namespaces: %v, %v, want the cache's one object", cmNames(got), err)
	}
}
