package dependents_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/lariat-dev/lariat/generated/controllers/core"
	"github.com/lariat-dev/lariat/internal/dependentstest"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
	"github.com/lariat-dev/lariat/pkg/generic"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// labelTarget, on a Namespace, names the namespace of the ConfigMap
// clusterOwned keeps for it; labelBad makes it return a namespaced object
// without a namespace.
const labelTarget, labelBad = "dependents-test-target", "dependents-test-bad"

// clusterOwned is a handler for Namespaces, a cluster-scoped owner kind: a
// ClusterRole (cluster-scoped) and, ordered after it, a ConfigMap in the
// namespace the owner's label names (a cluster-scoped owner's namespaced
// objects name their namespace). Namespaces without the label get nothing.
func clusterOwned(owner *corev1.Namespace) ([]*dependents.Object, error) {
	target := owner.Labels[labelTarget]
	if target == "" {
		return nil, nil
	}
	role := dependents.Of(&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: owner.Name + "-role"}})
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: owner.Name, Namespace: target},
		Data: map[string]string{"owner": owner.Name}}
	if owner.Labels[labelBad] != "" {
		cm.Namespace = ""
	}
	return []*dependents.Object{role, dependents.Of(cm).After(role)}, nil
}

// TestClusterScopedOwner: a cluster-scoped owner (a Namespace, through
// ClusterScoped) keeps a cluster-scoped and a namespaced object, created in
// order, and deleted in reverse order when it goes; a namespaced object it
// returns without a namespace is refused, saying so, and nothing of that
// owner is created.
func TestClusterScopedOwner(t *testing.T) {
	f, err := generic.NewFactoryFromConfig(cp.Config(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := core.NewFactory(f)
	if err != nil {
		t.Fatal(err)
	}
	namespaces, err := cf.Core().V1().Namespace()
	if err != nil {
		t.Fatal(err)
	}
	kinds := []schema.GroupVersionKind{rbacv1.SchemeGroupVersion.WithKind("ClusterRole"), corev1.SchemeGroupVersion.WithKind("ConfigMap")}
	// A Namespace's status has no condition list: no status is written.
	d, err := dependents.Register(t.Context(), f, dependents.ClusterScoped(namespaces),
		generic.StatusAccess[*corev1.Namespace, corev1.NamespaceStatus]{}, "cluster-owner", clusterOwned,
		dependents.Options{FieldManager: "cluster-owner", Kinds: kinds, Logger: controlplanetest.QuietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Start(t.Context(), 2); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c, cancel := context.WithTimeout(context.WithoutCancel(t.Context()), wait)
		defer cancel()
		if err := d.Wait(c); err != nil {
			t.Errorf("stopping: %v", err)
		}
	})
	kube := controlplanetest.Clientset(cp.Config())
	target := controlplanetest.Namespace(t, cp.Config())
	owner, err := kube.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		GenerateName: "cluster-owner-", Labels: map[string]string{labelTarget: target}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	role := owner.Name + "-role"
	t.Cleanup(func() {
		_ = kube.RbacV1().ClusterRoles().Delete(context.WithoutCancel(t.Context()), role, metav1.DeleteOptions{})
	})
	controlplanetest.Eventually(t, wait, "the owner's objects, all ready", func() bool { return d.Summary("", owner.Name).AllReady() })
	if _, err := kube.RbacV1().ClusterRoles().Get(t.Context(), role, metav1.GetOptions{}); err != nil {
		t.Fatalf("the cluster-scoped object: %v", err)
	}
	if advConfigMap(t, target, owner.Name) == nil {
		t.Fatal("the namespaced object is not there")
	}
	dependentstest.Recorded(t, d, kvscheduler.OpCreate, "ConfigMap "+owner.Name)
	if got := ops(d, kvscheduler.OpCreate); !before(got, "ClusterRole "+role, "ConfigMap "+owner.Name) {
		t.Errorf("created %v, want the ClusterRole first", got)
	}

	// Refused: a namespaced object without a namespace.
	bad, err := kube.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		GenerateName: "cluster-owner-bad-", Labels: map[string]string{labelTarget: target, labelBad: "true"}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, wait, "the bad owner refused", func() bool {
		s := d.Summary("", bad.Name)
		return len(s.Failed) > 0 && has(s.Message(), "is namespaced and its owner is cluster-scoped")
	})
	if _, err := kube.RbacV1().ClusterRoles().Get(t.Context(), bad.Name+"-role", metav1.GetOptions{}); err == nil {
		t.Errorf("the refused owner's ClusterRole was created")
		_ = kube.RbacV1().ClusterRoles().Delete(t.Context(), bad.Name+"-role", metav1.DeleteOptions{})
	}

	// The owner goes: no namespace controller runs here, so the test
	// finalizes the Namespace as it would.
	if err := kube.CoreV1().Namespaces().Delete(t.Context(), owner.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	gone, err := kube.CoreV1().Namespaces().Get(t.Context(), owner.Name, metav1.GetOptions{})
	if err == nil {
		gone.Spec.Finalizers = nil
		if _, err := kube.CoreV1().Namespaces().Finalize(t.Context(), gone, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		_ = kube.CoreV1().Namespaces().Delete(t.Context(), owner.Name, metav1.DeleteOptions{})
	}
	controlplanetest.Eventually(t, wait, "the owner's objects deleted", func() bool {
		_, err := kube.RbacV1().ClusterRoles().Get(t.Context(), role, metav1.GetOptions{})
		return err != nil && advConfigMap(t, target, owner.Name) == nil
	})
	dependentstest.Recorded(t, d, kvscheduler.OpDelete, "ClusterRole "+role)
	if got := ops(d, kvscheduler.OpDelete); !before(got, "ConfigMap "+owner.Name, "ClusterRole "+role) {
		t.Errorf("deleted %v, want the ConfigMap first", got)
	}
}
