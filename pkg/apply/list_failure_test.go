package apply_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/pkg/apply"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// A kind the set holds but the applier cannot list (here RBAC allows every
// verb on Secrets but list) is not taken for empty: Apply fails naming the
// kind, and the kind stays in the set's inventory, so the Secret left behind
// is pruned once listing works again. The other kinds, whose lists are
// complete, are pruned as usual.
func TestKindThatCannotBeListedStaysInTheSet(t *testing.T) {
	a, kube, ns, owner := setup(t)
	ctx := t.Context()
	grantNamespaced(t, ns)
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "secrets-but-list", Namespace: ns},
		Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{""}, Resources: []string{"secrets"},
			Verbs: []string{"get", "create", "update", "patch", "delete"},
		}},
	}
	if _, err := kube.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "secrets-but-list", Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "operator", Namespace: ns}},
	}
	if _, err := kube.RbacV1().RoleBindings(ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cfg := rest.CopyConfig(cp.Config())
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + ns + ":operator"}
	sa := controlplanetest.Clientset(cfg)
	var getErr error
	_ = wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		_, getErr = sa.CoreV1().Secrets(ns).Get(ctx, "none", metav1.GetOptions{})
		return apierrors.IsNotFound(getErr), nil
	})
	if !apierrors.IsNotFound(getErr) {
		t.Fatalf("the service account cannot get secrets after the grant: %v", getErr)
	}

	set := apply.Set{Owner: owner, ID: "mixed"}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}, StringData: map[string]string{"k": "v"}}
	if err := a.Apply(ctx, set, cm("a", "1"), cm("b", "1"), secret); err != nil {
		t.Fatal(err)
	}

	// The same operator, now without list on Secrets, drops b and s.
	limited := namespacedApplier(t, ns, apply.Options{FieldManager: "test-operator"})
	err := limited.Apply(ctx, set, cm("a", "1"))
	if err == nil || !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "Secret") {
		t.Fatalf("Apply with a kind it cannot list: %v, want a Forbidden error naming Secret", err)
	}
	if _, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "b", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("b, of a kind listed in full, was not pruned: %v", err)
	}
	if _, err := kube.CoreV1().Secrets(ns).Get(ctx, "s", metav1.GetOptions{}); err != nil {
		t.Fatalf("the Secret of the kind that could not be listed is gone: %v", err)
	}

	// Listing works again: the inventory still names Secrets, so s goes.
	if err := a.Apply(ctx, set, cm("a", "1")); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.CoreV1().Secrets(ns).Get(ctx, "s", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the Secret left while its kind could not be listed was never pruned (the kind left the inventory): %v", err)
	}
}
