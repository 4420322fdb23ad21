package generic_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	rbacv1ac "k8s.io/client-go/applyconfigurations/rbac/v1"
	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/generic"
)

func TestClientNamespaced(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	ctx := t.Context()
	cms := newConfigMaps(t, newFactory(t, cp.Config(), ns))

	created, err := cms.Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: ns, Labels: map[string]string{"app": "x"}},
		Data:       map[string]string{"k": "1"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if created.UID == "" || created.Data["k"] != "1" || created.GroupVersionKind() != configMapGVK {
		t.Fatalf("Create returned %+v", created)
	}

	got, err := cms.Get(ctx, ns, "a", metav1.GetOptions{})
	if err != nil || got.UID != created.UID || got.GroupVersionKind() != configMapGVK {
		t.Fatalf("Get: %+v, %v", got, err)
	}

	got.Data["k"] = "2"
	updated, err := cms.Update(ctx, got)
	if err != nil || updated.Data["k"] != "2" {
		t.Fatalf("Update: %+v, %v", updated, err)
	}
	if _, err := cms.Update(ctx, got); !apierrors.IsConflict(err) {
		t.Errorf("Update of a stale object: %v, want a conflict", err)
	}

	patched, err := cms.Patch(ctx, ns, "a", types.MergePatchType, []byte(`{"data":{"k":"3"}}`))
	if err != nil || patched.Data["k"] != "3" {
		t.Fatalf("Patch: %+v, %v", patched, err)
	}

	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: ns}}); err != nil {
		t.Fatal(err)
	}
	list, err := cms.List(ctx, ns, metav1.ListOptions{LabelSelector: "app=x"})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].Name != "a" {
		t.Errorf("List app=x: %v", names(list.Items))
	}
	if all, err := cms.List(ctx, ns, metav1.ListOptions{}); err != nil || len(all.Items) != 2 {
		t.Errorf("List all: %d items, %v", len(all.Items), err)
	}

	w, err := cms.Watch(ctx, ns, metav1.ListOptions{ResourceVersion: patched.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	if err := cms.Delete(ctx, ns, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Get(ctx, ns, "a", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("Get after Delete: %v, want NotFound", err)
	}
	if err := cms.Delete(ctx, ns, "a", metav1.DeleteOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("second Delete: %v, want NotFound", err)
	}
	expectEvent(t, w, watch.Deleted, "a")

	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "no-namespace"}}); err == nil || !strings.Contains(err.Error(), "namespace") {
		t.Errorf("Create without a namespace: %v, want an error naming the namespace", err)
	}
	if _, err := cms.Create(ctx, nil); err == nil {
		t.Error("Create(nil) succeeded")
	}
}

func expectEvent(t *testing.T, w watch.Interface, typ watch.EventType, name string) {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case e, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch closed before %s %s", typ, name)
			}
			cm, isCM := e.Object.(*corev1.ConfigMap)
			if e.Type == typ && isCM && cm.Name == name {
				return
			}
		case <-deadline:
			t.Fatalf("no %s event for %s", typ, name)
		}
	}
}

func names(cms []corev1.ConfigMap) []string {
	var out []string
	for _, cm := range cms {
		out = append(out, cm.Name)
	}
	return out
}

func TestApply(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	ctx := t.Context()
	cms := newConfigMaps(t, newFactory(t, cp.Config(), ns))

	applied, err := cms.Apply(ctx, corev1ac.ConfigMap("a", ns).WithData(map[string]string{"k": "1"}),
		metav1.ApplyOptions{FieldManager: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if applied.Data["k"] != "1" || applied.GroupVersionKind() != configMapGVK {
		t.Fatalf("Apply created %+v", applied)
	}
	if len(applied.ManagedFields) == 0 || applied.ManagedFields[0].Manager != "test" {
		t.Errorf("managed fields %+v, want the manager \"test\"", applied.ManagedFields)
	}

	// Another manager takes the field only with Force.
	other := corev1ac.ConfigMap("a", ns).WithData(map[string]string{"k": "2"})
	if _, err := cms.Apply(ctx, other, metav1.ApplyOptions{FieldManager: "other"}); !apierrors.IsConflict(err) {
		t.Errorf("Apply of another manager's field without Force: %v, want a conflict", err)
	}
	forced, err := cms.Apply(ctx, other, metav1.ApplyOptions{FieldManager: "other", Force: true})
	if err != nil || forced.Data["k"] != "2" {
		t.Fatalf("forced Apply: %+v, %v", forced, err)
	}

	for what, bad := range map[string]struct {
		config generic.ApplyConfiguration
		opts   metav1.ApplyOptions
	}{
		"no field manager": {corev1ac.ConfigMap("a", ns), metav1.ApplyOptions{}},
		"no name":          {corev1ac.ConfigMap("", ns), metav1.ApplyOptions{FieldManager: "test"}},
		"no namespace":     {corev1ac.ConfigMap("a", ""), metav1.ApplyOptions{FieldManager: "test"}},
		"nil":              {(*corev1ac.ConfigMapApplyConfiguration)(nil), metav1.ApplyOptions{FieldManager: "test"}},
	} {
		if _, err := cms.Apply(ctx, bad.config, bad.opts); err == nil {
			t.Errorf("Apply with %s succeeded", what)
		} else if what == "no field manager" && !strings.Contains(err.Error(), "FieldManager") {
			t.Errorf("Apply with no field manager: %v, want an error naming FieldManager", err)
		}
	}
}

func TestWithImpersonation(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	ctx := t.Context()
	cms := newConfigMaps(t, newFactory(t, cp.Config(), ns))
	createCM(t, ns, "a")
	asNobody, err := cms.WithImpersonation(rest.ImpersonationConfig{UserName: "nobody"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := asNobody.Get(ctx, ns, "a", metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("Get as a user without permissions: %v, want Forbidden", err)
	}
	if _, err := cms.Get(ctx, ns, "a", metav1.GetOptions{}); err != nil {
		t.Errorf("the original client changed identity: %v", err)
	}
}

func TestClientClusterScoped(t *testing.T) {
	ctx := t.Context()
	f := newFactory(t, cp.Config(), "")
	roles, err := generic.NewNonNamespacedController[*rbacv1.ClusterRole, *rbacv1.ClusterRoleList](
		rbacv1.SchemeGroupVersion.WithKind("ClusterRole"), "clusterroles", f.ControllerFactory())
	if err != nil {
		t.Fatal(err)
	}
	name := "generic-test-" + strings.ToLower(t.Name())
	label := map[string]string{"test": strings.ToLower(t.Name())}
	rule := rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}}

	created, err := roles.Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: label}, Rules: []rbacv1.PolicyRule{rule}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = roles.Delete(ctx, name, metav1.DeleteOptions{}) })
	got, err := roles.Get(ctx, name, metav1.GetOptions{})
	if err != nil || got.UID != created.UID {
		t.Fatalf("Get: %+v, %v", got, err)
	}
	got.Rules[0].Verbs = []string{"get", "list"}
	if updated, err := roles.Update(ctx, got); err != nil || len(updated.Rules[0].Verbs) != 2 {
		t.Fatalf("Update: %+v, %v", updated, err)
	}
	patched, err := roles.Patch(ctx, name, types.MergePatchType, []byte(`{"metadata":{"annotations":{"p":"1"}}}`))
	if err != nil || patched.Annotations["p"] != "1" {
		t.Fatalf("Patch: %+v, %v", patched, err)
	}
	list, err := roles.List(ctx, metav1.ListOptions{LabelSelector: "test=" + label["test"]})
	if err != nil || len(list.Items) != 1 || list.Items[0].Name != name {
		t.Fatalf("List: %+v, %v", list, err)
	}
	applied, err := roles.Apply(ctx, rbacv1ac.ClusterRole(name).WithLabels(map[string]string{"applied": "yes"}),
		metav1.ApplyOptions{FieldManager: "test"})
	if err != nil || applied.Labels["applied"] != "yes" {
		t.Fatalf("Apply: %+v, %v", applied, err)
	}

	var removed counter
	roles.OnRemove(ctx, "cluster-cleanup", func(key string, role *rbacv1.ClusterRole) (*rbacv1.ClusterRole, error) {
		if key == name && role != nil && role.DeletionTimestamp != nil {
			removed.inc()
		}
		return nil, nil
	})
	start(t, f)
	eventually(t, "finalizer on the cluster role", func() bool {
		got, err := roles.Get(ctx, name, metav1.GetOptions{})
		return err == nil && slices.Equal(got.Finalizers, []string{generic.FinalizerName("cluster-cleanup")})
	})
	eventually(t, "cluster role in the cache", func() bool {
		cached, err := roles.Cache().Get(name)
		return err == nil && cached.Labels["applied"] == "yes"
	})
	selected, err := roles.Cache().List(metav1LabelSelector(t, "test="+label["test"]))
	if err != nil || len(selected) != 1 {
		t.Errorf("cache List: %d, %v", len(selected), err)
	}

	if err := roles.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "cluster role deleted after its remove handler", func() bool {
		_, err := roles.Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	if removed.get() == 0 {
		t.Error("remove handler not called")
	}
	eventually(t, "cluster role gone from the cache", func() bool {
		_, err := roles.Cache().Get(name)
		return apierrors.IsNotFound(err)
	})

	asNobody, err := roles.WithImpersonation(rest.ImpersonationConfig{UserName: "nobody"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := asNobody.List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("List as a user without permissions: %v, want Forbidden", err)
	}
}

func TestUpdateStatus(t *testing.T) {
	ctx := t.Context()
	f := newFactory(t, cp.Config(), "")
	namespaces, err := generic.NewNonNamespacedController[*corev1.Namespace, *corev1.NamespaceList](namespaceGVK, "namespaces", f.ControllerFactory())
	if err != nil {
		t.Fatal(err)
	}
	nsName := controlplanetest.Namespace(t, cp.Config())
	got, err := namespaces.Get(ctx, nsName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	condition := corev1.NamespaceCondition{Type: "lariat.dev/Tested", Status: corev1.ConditionTrue, Reason: "Test", LastTransitionTime: metav1.Now()}

	// Update ignores status: namespaces have a status subresource.
	withCondition := got.DeepCopy()
	withCondition.Status.Conditions = append(withCondition.Status.Conditions, condition)
	updated, err := namespaces.Update(ctx, withCondition)
	if err != nil {
		t.Fatal(err)
	}
	if hasCondition(updated, condition.Type) {
		t.Fatal("Update wrote the status")
	}

	updated.Status.Conditions = append(updated.Status.Conditions, condition)
	statusUpdated, err := namespaces.UpdateStatus(ctx, updated)
	if err != nil {
		t.Fatal(err)
	}
	if !hasCondition(statusUpdated, condition.Type) {
		t.Error("UpdateStatus did not write the status")
	}
	if got, err := namespaces.Get(ctx, nsName, metav1.GetOptions{}); err != nil || !hasCondition(got, condition.Type) {
		t.Errorf("status not stored: %v", err)
	}
}

func hasCondition(ns *corev1.Namespace, typ corev1.NamespaceConditionType) bool {
	for _, c := range ns.Status.Conditions {
		if c.Type == typ {
			return true
		}
	}
	return false
}
