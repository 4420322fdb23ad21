package apply_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/lariat-dev/lariat/pkg/apply"
	"github.com/lariat-dev/lariat/pkg/client"
)

// applierWith returns an Applier whose requests go through wrap, which may
// act between the applier's requests as another writer would.
func applierWith(t *testing.T, wrap func(r *http.Request, send func() (*http.Response, error)) (*http.Response, error)) *apply.Applier {
	t.Helper()
	cfg := rest.CopyConfig(cp.Config())
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			return wrap(r, func() (*http.Response, error) { return rt.RoundTrip(r) })
		})
	}
	clients, err := client.NewSharedClientFactory(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := apply.New(clients, apply.Options{FieldManager: "test-operator"})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// immutableCM is an immutable ConfigMap: changing its data is rejected as
// Invalid (immutable field), which the Recreate options recreate.
func immutableCM(name, value string) *corev1.ConfigMap {
	c := cm(name, value)
	c.Immutable = ptr.To(true)
	return c
}

// An object the set names but that is made by hand after the set found it
// absent (between its read and its write) is not taken over: the set's
// write creates only, and the object is refused as any unmanaged one.
func TestCreateDoesNotTakeAnObjectMadeMeanwhile(t *testing.T) {
	_, kube, ns, owner := setup(t)
	var once sync.Once
	var made *corev1.ConfigMap
	a := applierWith(t, func(r *http.Request, send func() (*http.Response, error)) (*http.Response, error) {
		if r.Method == http.MethodPatch && strings.HasSuffix(r.URL.Path, "/configmaps/racy") {
			// The set read "racy" as absent; someone makes it now.
			once.Do(func() { made = handMadeCM(t, kube, ns, "racy", nil) })
		}
		return send()
	})
	err := a.Apply(t.Context(), apply.Set{Owner: owner, ID: "kids"}, cm("racy", "set"))
	if made == nil {
		t.Fatal("the set never wrote the object")
	}
	if notManaged(err, "racy") == nil {
		t.Errorf("apply over an object made between the set's read and write: %v, want a *apply.NotManagedError", err)
	}
	got, err := kube.CoreV1().ConfigMaps(ns).Get(t.Context(), "racy", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	unchanged(t, "the object made meanwhile", made, got)
}

// Recreate deletes only what the set holds: an immutable ConfigMap made by
// hand that a set with RecreateImmutable names is refused, not deleted and
// created again.
func TestRecreateRefusesAnUnmanagedObject(t *testing.T) {
	a, kube, ns, owner := setup(t)
	made, err := kube.CoreV1().ConfigMaps(ns).Create(t.Context(), immutableCM("frozen", "by hand"), metav1.CreateOptions{FieldManager: byHand})
	if err != nil {
		t.Fatal(err)
	}
	set := apply.Set{Owner: owner, ID: "kids", RecreateImmutable: true, RecreateKinds: []schema.GroupKind{{Kind: "ConfigMap"}}}
	err = a.Apply(t.Context(), set, immutableCM("frozen", "set"))
	if notManaged(err, "frozen") == nil {
		t.Errorf("recreate of a hand-made object: %v, want a *apply.NotManagedError", err)
	}
	got, err := kube.CoreV1().ConfigMaps(ns).Get(t.Context(), "frozen", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the hand-made object is gone: %v", err)
	}
	unchanged(t, "the hand-made immutable ConfigMap", made, got)
}

// Recreate deletes the object only as the set checked it: one taken out of
// the set (its set label removed by its user) between the set's read and
// the delete stays.
func TestRecreateDoesNotDeleteAnObjectTakenOutOfTheSetMeanwhile(t *testing.T) {
	_, kube, ns, owner := setup(t)
	ctx := t.Context()
	var once sync.Once
	var released *corev1.ConfigMap
	a := applierWith(t, func(r *http.Request, send func() (*http.Response, error)) (*http.Response, error) {
		resp, err := send()
		if err == nil && r.Method == http.MethodPatch && resp.StatusCode == http.StatusUnprocessableEntity && strings.HasSuffix(r.URL.Path, "/configmaps/frozen") {
			// The apply was rejected for the immutable field; before
			// the recreate deletes, the user takes the object out of
			// the set.
			once.Do(func() {
				got, gerr := kube.CoreV1().ConfigMaps(ns).Get(ctx, "frozen", metav1.GetOptions{})
				if gerr != nil {
					t.Error(gerr)
					return
				}
				delete(got.Labels, apply.LabelSet)
				released, gerr = kube.CoreV1().ConfigMaps(ns).Update(ctx, got, metav1.UpdateOptions{FieldManager: byHand})
				if gerr != nil {
					t.Error(gerr)
				}
			})
		}
		return resp, err
	})
	set := apply.Set{Owner: owner, ID: "kids", RecreateImmutable: true}
	if err := a.Apply(ctx, set, immutableCM("frozen", "1")); err != nil {
		t.Fatal(err)
	}
	err := a.Apply(ctx, set, immutableCM("frozen", "2"))
	if released == nil {
		t.Fatal("the recreate's apply was never rejected")
	}
	if err == nil {
		t.Error("a recreate of an object taken out of the set meanwhile succeeded")
	}
	got, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "frozen", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the object taken out of the set was deleted: %v", err)
	}
	if got.UID != released.UID || got.ResourceVersion != released.ResourceVersion {
		t.Fatalf("the object taken out of the set was recreated or written to: uid %s→%s, resourceVersion %s→%s",
			released.UID, got.UID, released.ResourceVersion, got.ResourceVersion)
	}
}

// Adopting is not recreating: an object that belongs to no set, which the
// set may adopt (Set.Adopt), but whose apply is rejected for an immutable
// field, is not deleted and created again, whatever the Recreate options:
// until the set has applied it once, it is someone else's object. The
// apply's Invalid error is returned and the object stays as it is.
func TestRecreateDoesNotDeleteAnObjectBeingAdopted(t *testing.T) {
	a, kube, ns, owner := setup(t)
	made, err := kube.CoreV1().ConfigMaps(ns).Create(t.Context(), immutableCM("frozen", "by hand"), metav1.CreateOptions{FieldManager: byHand})
	if err != nil {
		t.Fatal(err)
	}
	set := apply.Set{Owner: owner, ID: "kids", Adopt: true, RecreateImmutable: true}
	err = a.Apply(t.Context(), set, immutableCM("frozen", "set"))
	if !apierrors.IsInvalid(err) {
		t.Errorf("adopting an object whose apply is rejected for an immutable field: %v, want the Invalid error", err)
	}
	got, err := kube.CoreV1().ConfigMaps(ns).Get(t.Context(), "frozen", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the object being adopted is gone: %v", err)
	}
	unchanged(t, "the object being adopted", made, got)
}
