package kubedescriptor_test

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

var clusterRoleKind = schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}

// TestScopeAndCache applies a cluster-scoped object and a namespaced one
// through descriptors that retrieve from informers, and repairs drift with
// a resync served by the cache.
func TestScopeAndCache(t *testing.T) {
	ctx := t.Context()
	clients, err := client.NewSharedClientFactory(cp.Config(), nil)
	if err != nil {
		t.Fatal(err)
	}
	kube := controlplanetest.Clientset(cp.Config())
	ns := controlplanetest.Namespace(t, cp.Config())
	caches := cache.NewSharedCacheFactory(clients, nil)
	s, err := kvscheduler.New(kvscheduler.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	opts := kubedescriptor.Options{Clients: clients, Cache: caches, FieldManager: "kv-cache-test", Namespace: ns}
	for _, gvk := range []schema.GroupVersionKind{clusterRoleKind, configMapKind} {
		d, err := kubedescriptor.New(gvk, opts)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.RegisterDescriptor(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	if err := caches.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := caches.WaitForCacheSync(ctx); err != nil {
		t.Fatal(err)
	}

	roleName := ns + "-reader" // cluster-wide, so unique per test namespace
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: roleName},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}}}}
	roleKey, err := kubedescriptor.Key(role)
	if err != nil {
		t.Fatal(err)
	}
	if want := "rbac.authorization.k8s.io/ClusterRole/_/" + roleName; roleKey != want {
		t.Fatalf("key %q, want %q", roleKey, want)
	}
	// A namespaced object without a namespace cannot be applied.
	stray := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "stray"}}
	strayKey := kubedescriptor.KeyFor(configMapKind, "", "stray")
	cmKey := kubedescriptor.KeyFor(configMapKind, ns, "web-config")
	rec, err := s.StartNBTransaction().SetValue(roleKey, role).SetValue(cmKey, configMap(ns)).SetValue(strayKey, stray).Commit(ctx)
	if err == nil {
		t.Fatalf("a namespaced object without namespace was applied\n%v", rec)
	}
	if st := s.GetValueStatus(strayKey); st.State != kvscheduler.Failed && st.State != kvscheduler.Retrying {
		t.Fatalf("stray configmap: %+v", st)
	}
	if st := s.GetValueStatus(roleKey); st.State != kvscheduler.Configured {
		t.Fatalf("cluster role: %+v", st)
	}
	got, err := kube.RbacV1().ClusterRoles().Get(ctx, roleName, metav1.GetOptions{})
	if err != nil || got.Labels[kubedescriptor.LabelManagedBy] != "kv-cache-test" {
		t.Fatalf("cluster role on the server: %v %v", got, err)
	}
	commit(t, s.StartNBTransaction().SetValue(strayKey, nil))

	// Deleted behind the scheduler's back: once the cache has seen the
	// deletion, a resync re-creates both.
	if err := kube.RbacV1().ClusterRoles().Delete(ctx, roleName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := kube.CoreV1().ConfigMaps(ns).Delete(ctx, "web-config", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	informers := caches.Informers()
	err = wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		_, roleCached, _ := informers[clusterRoleKind].GetStore().GetByKey(roleName)
		_, cmCached, _ := informers[configMapKind].GetStore().GetByKey(ns + "/web-config")
		return !roleCached && !cmCached, nil
	})
	if err != nil {
		t.Fatal("the cache did not see the deletions")
	}
	rec = commit(t, s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync))
	if ops := executed(rec); len(ops) != 2 {
		t.Fatalf("resync executed %v", ops)
	}
	if _, err := kube.RbacV1().ClusterRoles().Get(ctx, roleName, metav1.GetOptions{}); err != nil {
		t.Fatalf("cluster role not restored: %v", err)
	}
	if _, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "web-config", metav1.GetOptions{}); err != nil {
		t.Fatalf("configmap not restored: %v", err)
	}

	// Removing the value deletes the cluster-scoped object.
	commit(t, s.StartNBTransaction().SetValue(roleKey, nil))
	if _, err := kube.RbacV1().ClusterRoles().Get(ctx, roleName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("cluster role not deleted: %v", err)
	}
}

// TestRecreateOnImmutable changes the data of an immutable ConfigMap, which
// the server only allows by deleting and creating it again.
func TestRecreateOnImmutable(t *testing.T) {
	ctx := t.Context()
	clients, err := client.NewSharedClientFactory(cp.Config(), nil)
	if err != nil {
		t.Fatal(err)
	}
	ns := controlplanetest.Namespace(t, cp.Config())
	s, err := kvscheduler.New(kvscheduler.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	d, err := kubedescriptor.New(configMapKind, kubedescriptor.Options{Clients: clients, FieldManager: fieldManager,
		Namespace: ns, RecreateOnImmutable: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RegisterDescriptor(ctx, d); err != nil {
		t.Fatal(err)
	}
	cm := configMap(ns)
	cm.Immutable = ptr.To(true)
	key, err := kubedescriptor.Key(cm)
	if err != nil {
		t.Fatal(err)
	}
	commit(t, s.StartNBTransaction().SetValue(key, cm))
	changed := cm.DeepCopy()
	changed.Data["greeting"] = "bye"
	rec := commit(t, s.StartNBTransaction().SetValue(key, changed))
	if ops := executed(rec); !slices.Equal(ops, []string{"DELETE " + key, "CREATE " + key}) {
		t.Fatalf("executed %v, want a re-create", ops)
	}
	kube := kubernetes.NewForConfigOrDie(cp.Config())
	got, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, cm.Name, metav1.GetOptions{})
	if err != nil || got.Data["greeting"] != "bye" {
		t.Fatalf("configmap %v, %v", got, err)
	}
}

// TestNilAndBadValuesAreInvalid checks that values the descriptor cannot
// handle are reported, not applied.
func TestNilAndBadValuesAreInvalid(t *testing.T) {
	s, _, ns := setup(t)
	nilKey := kubedescriptor.KeyFor(configMapKind, ns, "nil")
	wrongKey := kubedescriptor.KeyFor(configMapKind, ns, "not-its-name")
	_, _ = s.StartNBTransaction().SetValue(nilKey, (*corev1.ConfigMap)(nil)).SetValue(wrongKey, configMap(ns)).Commit(t.Context())
	for _, k := range []string{nilKey, wrongKey} {
		if st := s.GetValueStatus(k); st.State != kvscheduler.Invalid {
			t.Errorf("%s: %+v", k, st)
		}
	}
	if kubedescriptor.Equivalent((*corev1.ConfigMap)(nil), configMap(ns)) {
		t.Error("a nil value is equivalent to a configmap")
	}
}
