package apply_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/pkg/apply"
	"github.com/lariat-dev/lariat/pkg/client"
)

// advHeldDelete holds back the first DELETE of one object made through a
// config, until released: the pass that sends it is slow (a loaded
// replica, a slow network) at exactly that point.
type advHeldDelete struct {
	path    string
	mu      sync.Mutex
	used    bool
	held    chan struct{} // closed once the DELETE is held
	release chan struct{}
}

func (h *advHeldDelete) wrap(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return advRoundTripper(func(req *http.Request) (*http.Response, error) {
			if req.Method == http.MethodDelete && strings.HasSuffix(req.URL.Path, h.path) {
				h.mu.Lock()
				first := !h.used
				h.used = true
				h.mu.Unlock()
				if first {
					close(h.held)
					<-h.release
				}
			}
			return rt.RoundTrip(req)
		})
	})
	return c
}

type advRoundTripper func(*http.Request) (*http.Response, error)

func (f advRoundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// staleApplier returns an applier (of another replica, the operator's field
// manager) whose first DELETE of path is held until release is called; the
// test calls release when it ends too.
func staleApplier(t *testing.T, path string) (stale *apply.Applier, hold *advHeldDelete, release func()) {
	t.Helper()
	hold = &advHeldDelete{path: path, held: make(chan struct{}), release: make(chan struct{})}
	var releaseOnce sync.Once
	release = func() { releaseOnce.Do(func() { close(hold.release) }) }
	t.Cleanup(release)
	staleClients, err := client.NewSharedClientFactory(hold.wrap(cp.Config()), nil)
	if err != nil {
		t.Fatal(err)
	}
	stale, err = apply.New(staleClients, apply.Options{FieldManager: "test-operator"})
	if err != nil {
		t.Fatal(err)
	}
	return stale, hold, release
}

// pruneHeld runs stale.Apply of set, with no objects (a deletion pass), in
// the background, and waits until its DELETE of what (hold's object) is
// held; the Apply's result arrives on the channel returned.
func pruneHeld(t *testing.T, stale *apply.Applier, set apply.Set, hold *advHeldDelete, what string) <-chan error {
	t.Helper()
	pruned := make(chan error, 1)
	go func() { pruned <- stale.Apply(t.Context(), set) }()
	select {
	case <-hold.held:
	case err := <-pruned:
		t.Fatalf("the deletion pass ended before deleting the %s: %v", what, err)
	case <-time.After(time.Minute):
		t.Fatalf("the deletion pass never deleted the %s", what)
	}
	return pruned
}

// TestAdvLatePruneOfAGoneOwnerDeletesTheRecreatedOwnersChild: the owner's
// set is pruned by a deletion pass (Set.OwnerKey, no objects) of one
// replica: it confirms the owner gone, lists the child, finds it applied
// for the gone owner, and sends the delete with the child's UID and
// resourceVersion. Before that delete arrives, the owner is created again
// under its name and another replica applies the child for the new owner
// (same object, new resourceVersion, owner-uid of the new owner). The
// delete fails with a conflict; deleteFromSet reads the child again, sees
// the same UID and the set's label, and deletes it without asking whose it
// is now: the child of a live owner, applied for it, is pruned by a pass
// for the old one. (docs/safety.md: "a prune never deletes an object
// applied for a live owner of that name with another UID".)
func TestAdvLatePruneOfAGoneOwnerDeletesTheRecreatedOwnersChild(t *testing.T) {
	fresh, kube, ns, owner := setup(t)
	ctx := t.Context()
	stale, hold, release := staleApplier(t, "/namespaces/"+ns+"/configmaps/child")

	if err := fresh.Apply(ctx, apply.Set{Owner: owner, ID: "children"}, cm("child", "for the first owner")); err != nil {
		t.Fatal(err)
	}
	if err := kube.CoreV1().ConfigMaps(ns).Delete(ctx, "owner", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// The deletion pass for the gone owner, held at its delete of the child.
	key := apply.ObjectKey{GVK: corev1.SchemeGroupVersion.WithKind("ConfigMap"), Namespace: ns, Name: "owner"}
	pruned := pruneHeld(t, stale, apply.Set{OwnerKey: &key, ID: "children"}, hold, "child")

	// The owner is created again, and its child applied for it.
	owner2, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := fresh.Apply(ctx, apply.Set{Owner: owner2, ID: "children"}, cm("child", "for the second owner")); err != nil {
		t.Fatal(err)
	}
	child, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "child", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := child.Annotations[apply.AnnotationOwnerUID]; got != string(owner2.UID) {
		t.Fatalf("the child records owner %q, want the new owner's %q", got, owner2.UID)
	}

	release()
	err = <-pruned
	after, getErr := kube.CoreV1().ConfigMaps(ns).Get(ctx, "child", metav1.GetOptions{})
	if apierrors.IsNotFound(getErr) {
		t.Fatalf("the child applied for the live owner %s (UID %s, resourceVersion %s) was deleted by the late deletion pass of the gone owner %s (its Apply returned %v)",
			owner2.Name, owner2.UID, child.ResourceVersion, owner.UID, err)
	}
	if getErr != nil {
		t.Fatal(getErr)
	}
	if after.UID != child.UID {
		t.Fatalf("the child was replaced: UID %s, was %s", after.UID, child.UID)
	}
}
