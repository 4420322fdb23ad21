package kubedescriptor_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestAdv10ACopiedManifestIsNotDeletedByAResync: a user copies an object
// the scheduler manages (kubectl get -o yaml, a new name, kubectl create:
// the copy carries every label, lariat.dev/managed-by included). The
// scheduler never applied the copy (its managedFields hold no Apply of
// the descriptor's field manager), yet a full resync retrieves it as one
// of its own, finds no value wants it, and deletes it: an object a user
// made by hand, deleted. Fixed: a copy without the stamp of authorship
// (AnnotationAppliedAs) is judged by its managedFields, and is not the
// descriptor's.
func TestAdv10ACopiedManifestIsNotDeletedByAResync(t *testing.T) {
	s, kube, ns := setup(t)
	ctx := t.Context()
	key := kubedescriptor.KeyFor(configMapKind, ns, "web-config")
	commit(t, s.StartNBTransaction().SetValue(key, configMap(ns)))

	orig, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "web-config", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// What `kubectl get -o yaml`, an edited name and `kubectl create`
	// make: the labels and data, not the server's metadata.
	cpy := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "my-copy", Namespace: ns, Labels: orig.Labels}, Data: orig.Data}
	if _, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, cpy, metav1.CreateOptions{FieldManager: "kubectl-create"}); err != nil {
		t.Fatal(err)
	}
	rec := commit(t, s.StartNBTransaction().WithResync(kvscheduler.FullResync).SetValue(key, configMap(ns)))
	if _, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "my-copy", metav1.GetOptions{}); apierrors.IsNotFound(err) {
		t.Fatalf("the user's copy my-copy, never applied by %s, was deleted by the full resync (executed %v)", fieldManager, executed(rec))
	} else if err != nil {
		t.Fatal(err)
	}
}
