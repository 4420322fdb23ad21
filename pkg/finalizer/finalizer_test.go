package finalizer_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/controlplane"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/finalizer"
	"github.com/lariat-dev/lariat/pkg/generic"
)

var cp *controlplane.ControlPlane

func TestMain(m *testing.M) { controlplanetest.Main(m, controlplane.Options{}, &cp) }

var configMapGVK = corev1.SchemeGroupVersion.WithKind("ConfigMap")

// createDeleted creates a ConfigMap with finalizers and deletes it, so it
// waits for them; with deleted false it is only created.
func createDeleted(t *testing.T, ns, name string, deleted bool, finalizers ...string) {
	t.Helper()
	kube := controlplanetest.Clientset(cp.Config())
	if _, err := kube.CoreV1().ConfigMaps(ns).Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Finalizers: finalizers}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if deleted {
		if err := kube.CoreV1().ConfigMaps(ns).Delete(t.Context(), name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

func finalizersOf(t *testing.T, ns, name string) ([]string, error) {
	t.Helper()
	cm, err := controlplanetest.Clientset(cp.Config()).CoreV1().ConfigMaps(ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return cm.Finalizers, nil
}

// Clean removes only the unhandled finalizers with its prefixes, only from
// objects being deleted; a dry run reports the same and writes nothing.
func TestCleanRemovesOnlyUnhandledPrefixedFinalizersOfDeletingObjects(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	clients, err := client.NewSharedClientFactory(cp.Config(), nil)
	if err != nil {
		t.Fatal(err)
	}
	current, removed := generic.FinalizerName("current"), generic.FinalizerName("removed-handler")
	const others = "example.com/other-owner"
	createDeleted(t, ns, "stuck", true, removed, current, others)
	createDeleted(t, ns, "alive", false, removed)
	createDeleted(t, ns, "ported", true, "wrangler.cattle.io/old-handler")
	opts := finalizer.Options{
		Prefixes:  []string{finalizer.LariatPrefix, finalizer.WranglerPrefix},
		Handled:   []string{current},
		Namespace: ns,
		DryRun:    true,
	}

	report, err := finalizer.Clean(t.Context(), clients, configMapGVK, opts)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, s := range report {
		if s.Removed {
			t.Fatalf("dry run removed %+v", s)
		}
		got[s.Name] = s.Unhandled
	}
	if len(got) != 2 || !slices.Equal(got["stuck"], []string{removed}) || !slices.Equal(got["ported"], []string{"wrangler.cattle.io/old-handler"}) {
		t.Fatalf("dry-run report %+v, want stuck's %s and ported's wrangler finalizer", report, removed)
	}
	if f, err := finalizersOf(t, ns, "stuck"); err != nil || len(f) != 3 {
		t.Fatalf("dry run changed stuck: %v %v", f, err)
	}

	opts.DryRun = false
	report, err = finalizer.Clean(t.Context(), clients, configMapGVK, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(report) != 2 || !report[0].Removed || !report[1].Removed {
		t.Fatalf("report %+v, want two objects released", report)
	}
	if f, err := finalizersOf(t, ns, "stuck"); err != nil || !slices.Equal(f, []string{current, others}) {
		t.Fatalf("stuck's finalizers %v (%v), want the handled one and the other owner's", f, err)
	}
	if f, err := finalizersOf(t, ns, "alive"); err != nil || !slices.Equal(f, []string{removed}) {
		t.Fatalf("an object not being deleted was touched: %v (%v)", f, err)
	}
	if _, err := finalizersOf(t, ns, "ported"); !apierrors.IsNotFound(err) {
		t.Fatalf("ported, released of its only finalizer, is not gone: %v", err)
	}
}

// PendingFor spares objects whose deletion is recent, and Clean refuses to
// run without prefixes.
func TestCleanPendingForAndRequiredPrefixes(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	clients, err := client.NewSharedClientFactory(cp.Config(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := finalizer.Clean(t.Context(), clients, configMapGVK, finalizer.Options{Namespace: ns}); err == nil || !strings.Contains(err.Error(), "prefixes") {
		t.Fatalf("Clean without prefixes: %v", err)
	}
	createDeleted(t, ns, "recent", true, generic.FinalizerName("gone"))
	report, err := finalizer.Clean(t.Context(), clients, configMapGVK, finalizer.Options{
		Prefixes: []string{finalizer.LariatPrefix}, Namespace: ns, PendingFor: time.Hour,
	})
	if err != nil || len(report) != 0 {
		t.Fatalf("a recent deletion was reported: %+v %v", report, err)
	}
	if f, err := finalizersOf(t, ns, "recent"); err != nil || len(f) != 1 {
		t.Fatalf("a recent deletion was released: %v %v", f, err)
	}
}

// Clean follows the list's continue token: with one object per page, the
// stuck objects on every page are released, and the object between them
// that is not being deleted keeps its finalizer.
func TestCleanReadsEveryPage(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	clients, err := client.NewSharedClientFactory(cp.Config(), nil)
	if err != nil {
		t.Fatal(err)
	}
	gone := generic.FinalizerName("gone")
	createDeleted(t, ns, "a", true, gone)
	createDeleted(t, ns, "b", false, gone)
	createDeleted(t, ns, "c", true, gone)
	opts := finalizer.WithPageSize(finalizer.Options{Prefixes: []string{finalizer.LariatPrefix}, Namespace: ns}, 1)
	report, err := finalizer.Clean(t.Context(), clients, configMapGVK, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(report) != 2 || report[0].Name != "a" || report[1].Name != "c" || !report[0].Removed || !report[1].Removed {
		t.Fatalf("report %+v, want a and c released", report)
	}
	if f, err := finalizersOf(t, ns, "b"); err != nil || !slices.Equal(f, []string{gone}) {
		t.Fatalf("an object not being deleted was touched: %v (%v)", f, err)
	}
}
