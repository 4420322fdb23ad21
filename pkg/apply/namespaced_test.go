package apply_test

import (
	"context"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/pkg/apply"
	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// grantNamespaced gives the service account "operator" of ns a Role on
// ConfigMaps in ns and nothing else, as a namespace-scoped operator has.
func grantNamespaced(t *testing.T, ns string) {
	t.Helper()
	ctx := t.Context()
	kube := controlplanetest.Clientset(cp.Config())
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "operator", Namespace: ns},
		Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{""}, Resources: []string{"configmaps"},
			Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"},
		}},
	}
	if _, err := kube.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "operator", Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "operator"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "operator", Namespace: ns}},
	}
	if _, err := kube.RbacV1().RoleBindings(ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The API server's RBAC authorizer learns of the binding through its
	// own informers: wait until the service account may list.
	cfg := rest.CopyConfig(cp.Config())
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + ns + ":operator"}
	sa := controlplanetest.Clientset(cfg)
	var listErr error
	_ = wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		_, listErr = sa.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
		return listErr == nil, nil
	})
	if listErr != nil {
		t.Fatalf("the service account cannot list configmaps after the grant: %v", listErr)
	}
}

// namespacedApplier returns an applier acting as the service account
// grantNamespaced gave rights to.
func namespacedApplier(t *testing.T, ns string, opts apply.Options) *apply.Applier {
	t.Helper()
	cfg := rest.CopyConfig(cp.Config())
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + ns + ":operator"}
	clients, err := client.NewSharedClientFactory(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if opts.FieldManager == "" {
		opts.FieldManager = "namespaced-operator"
	}
	a, err := apply.New(clients, opts)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// An operator whose RBAC covers only its namespace applies and prunes: the
// set's pruning lists only in the namespaces its inventory records.
func TestNamespacedOperatorAppliesAndPrunes(t *testing.T) {
	_, kube, ns, owner := setup(t)
	ctx := t.Context()
	grantNamespaced(t, ns)
	a := namespacedApplier(t, ns, apply.Options{})
	set := apply.Set{Owner: owner, ID: "ns-scoped"}
	if err := a.Apply(ctx, set, cm("a", "1"), cm("b", "1")); err != nil {
		t.Fatalf("a namespace-scoped operator cannot apply: %v", err)
	}
	if err := a.Apply(ctx, set, cm("a", "2")); err != nil {
		t.Fatalf("a namespace-scoped operator cannot prune: %v", err)
	}
	if _, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "b", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("b was not pruned: %v", err)
	}
	if err := a.Apply(ctx, set); err != nil {
		t.Fatalf("a namespace-scoped operator cannot prune the whole set: %v", err)
	}
	if _, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "a", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("a was not pruned with the whole set: %v", err)
	}
}

// An inventory that records no namespaces (written before Lariat recorded
// them) is pruned across all namespaces, or only in Options.PruneNamespaces
// when the operator says where it may list.
func TestPruneNamespacesForInventoriesWithoutNamespaces(t *testing.T) {
	admin, kube, ns, owner := setup(t)
	ctx := t.Context()
	set := apply.Set{Owner: owner, ID: "legacy"}
	if err := admin.Apply(ctx, set, cm("a", "1"), cm("b", "1")); err != nil {
		t.Fatal(err)
	}
	inv, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "lariat-set-"+hashOf(t, kube, ns, "a")[:20], metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	inv.Data["kinds"] = "/v1/ConfigMap"
	if _, err := kube.CoreV1().ConfigMaps(ns).Update(ctx, inv, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	grantNamespaced(t, ns)
	if err := namespacedApplier(t, ns, apply.Options{}).Apply(ctx, set, cm("a", "1")); !apierrors.IsForbidden(err) {
		t.Fatalf("pruning a kind of unknown namespaces without PruneNamespaces: %v, want Forbidden listing all namespaces", err)
	}
	// The same operator (its field manager applied a and b), now allowed
	// to list in its own namespace only.
	restricted := namespacedApplier(t, ns, apply.Options{FieldManager: "test-operator", PruneNamespaces: []string{ns}})
	// The failed Apply above left the inventory as it was.
	if err := restricted.Apply(ctx, set, cm("a", "1")); err != nil {
		t.Fatalf("pruning with PruneNamespaces: %v", err)
	}
	if _, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "b", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("b was not pruned: %v", err)
	}
}
