package generic_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/generic"
)

// By default a namespaced owner's children stay in its namespace and are
// namespaced: a child elsewhere fails the handler (cond False, saying why)
// and nothing is written.
func TestGeneratingHandlerRefusesOtherScopesByDefault(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	other := controlplanetest.Namespace(t, cp.Config())
	f := newFactory(t, cp.Config(), ns)
	svcs := newServices(t, f)
	generic.RegisterGeneratingHandler(t.Context(), svcs, newApplier(t, cp.Config(), f), serviceStatus, generated, "children",
		func(svc *corev1.Service, st corev1.ServiceStatus) ([]runtime.Object, corev1.ServiceStatus, error) {
			if svc.Name == "cluster" {
				return []runtime.Object{&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "gen-" + ns}}}, st, nil
			}
			return []runtime.Object{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "child", Namespace: other}}}, st, nil
		}, nil)
	createService(t, ns, "cross", 80)
	createService(t, ns, "cluster", 80)
	start(t, f)
	for name, want := range map[string]string{"cross": "outside the namespace", "cluster": "cluster-scoped"} {
		eventually(t, name+" refused", func() bool {
			c := generated.Get(getService(t, ns, name).Status.Conditions)
			return c != nil && c.Status == metav1.ConditionFalse && strings.Contains(c.Message, want)
		})
	}
	if _, err := kube().CoreV1().ConfigMaps(other).Get(t.Context(), "child", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("a refused cross-namespace child was written: %v", err)
	}
	if _, err := kube().RbacV1().ClusterRoles().Get(t.Context(), "gen-"+ns, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("a refused cluster-scoped child was written: %v", err)
	}
}

// With AllowCrossNamespace, AllowClusterScoped and NoOwnerReference, the
// children are written without owner references, and deleting the owner
// still prunes all of them: the set's inventory finds them.
func TestGeneratingHandlerUnreferencedChildrenPrunedWithOwner(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	other := controlplanetest.Namespace(t, cp.Config())
	f := newFactory(t, cp.Config(), ns)
	svcs := newServices(t, f)
	generic.RegisterGeneratingHandler(t.Context(), svcs, newApplier(t, cp.Config(), f), serviceStatus, generated, "children",
		func(svc *corev1.Service, st corev1.ServiceStatus) ([]runtime.Object, corev1.ServiceStatus, error) {
			return []runtime.Object{
				&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "here"}},
				&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "there", Namespace: other}},
				&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "gen-" + ns}},
			}, st, nil
		}, &generic.GeneratingHandlerOptions{NoOwnerReference: true, AllowCrossNamespace: true, AllowClusterScoped: true})
	createService(t, ns, "web", 80)
	start(t, f)
	ctx := t.Context()
	eventually(t, "all children", func() bool {
		_, e1 := kube().CoreV1().ConfigMaps(ns).Get(ctx, "here", metav1.GetOptions{})
		_, e2 := kube().CoreV1().ConfigMaps(other).Get(ctx, "there", metav1.GetOptions{})
		_, e3 := kube().RbacV1().ClusterRoles().Get(ctx, "gen-"+ns, metav1.GetOptions{})
		return e1 == nil && e2 == nil && e3 == nil
	})
	here, err := kube().CoreV1().ConfigMaps(ns).Get(ctx, "here", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(here.OwnerReferences) != 0 {
		t.Fatalf("owner references with NoOwnerReference: %+v", here.OwnerReferences)
	}
	if err := kube().CoreV1().Services(ns).Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "all children pruned", func() bool {
		_, e1 := kube().CoreV1().ConfigMaps(ns).Get(ctx, "here", metav1.GetOptions{})
		_, e2 := kube().CoreV1().ConfigMaps(other).Get(ctx, "there", metav1.GetOptions{})
		_, e3 := kube().RbacV1().ClusterRoles().Get(ctx, "gen-"+ns, metav1.GetOptions{})
		return apierrors.IsNotFound(e1) && apierrors.IsNotFound(e2) && apierrors.IsNotFound(e3)
	})
}

// UniqueApplyForResourceVersion applies once per resourceVersion of the
// owner: a child deleted behind the handler's back comes back only when the
// owner changes.
func TestGeneratingHandlerUniqueApplyForResourceVersion(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	f := newFactory(t, cp.Config(), ns)
	svcs := newServices(t, f)
	var mu sync.Mutex
	handling := ""            // the resourceVersion the generating handler last got
	done := map[string]bool{} // resourceVersions whose round (apply included) finished
	rounds := 0
	generic.RegisterGeneratingHandler(t.Context(), svcs, newApplier(t, cp.Config(), f), serviceStatus, generated, "children",
		func(svc *corev1.Service, st corev1.ServiceStatus) ([]runtime.Object, corev1.ServiceStatus, error) {
			mu.Lock()
			handling = svc.ResourceVersion
			mu.Unlock()
			return []runtime.Object{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "child"}}}, st, nil
		}, &generic.GeneratingHandlerOptions{UniqueApplyForResourceVersion: true})
	// Runs after the generating handler (and its apply) for the same key;
	// it may be handed the status the generating handler wrote, so the
	// resourceVersion that round handled is taken from the handler.
	svcs.OnChange(t.Context(), "after", func(key string, svc *corev1.Service) (*corev1.Service, error) {
		mu.Lock()
		defer mu.Unlock()
		if svc != nil {
			done[handling] = true
			rounds++
		}
		return nil, nil
	})
	createService(t, ns, "web", 80)
	start(t, f)
	ctx := t.Context()
	eventually(t, "condition True in the cache", func() bool {
		svc, err := svcs.Cache().Get(ns, "web")
		return err == nil && generated.IsTrue(svc.Status.Conditions)
	})
	svc, err := svcs.Cache().Get(ns, "web")
	if err != nil {
		t.Fatal(err)
	}
	svcs.Enqueue(ns, "web")
	eventually(t, "a round at the settled resourceVersion", func() bool { mu.Lock(); defer mu.Unlock(); return done[svc.ResourceVersion] })
	if err := kube().CoreV1().ConfigMaps(ns).Delete(ctx, "child", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	before := rounds
	mu.Unlock()
	svcs.Enqueue(ns, "web")
	eventually(t, "another round", func() bool { mu.Lock(); defer mu.Unlock(); return rounds > before })
	if _, err := kube().CoreV1().ConfigMaps(ns).Get(ctx, "child", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the child was applied again for an unchanged owner: %v", err)
	}
	updateService(t, ns, "web", func(s *corev1.Service) { s.Labels = map[string]string{"changed": "yes"} })
	eventually(t, "the child applied for the changed owner", func() bool {
		_, err := kube().CoreV1().ConfigMaps(ns).Get(context.Background(), "child", metav1.GetOptions{})
		return err == nil
	})
}

// The scope flags are the one way to allow other scopes, and each allows
// only its own: AllowCrossNamespace alone writes a child in another
// namespace and still refuses a cluster-scoped one; Set's NoDelete keeps
// the child when the handler stops returning it. (GeneratingHandlerOptions
// used to take a whole apply.Set whose OwnerNamespaceOnly and
// ClusterScopedRefused these flags silently overwrote; Set now holds only
// options nothing else sets.)
func TestGeneratingHandlerAllowCrossNamespaceAlone(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	other := controlplanetest.Namespace(t, cp.Config())
	f := newFactory(t, cp.Config(), ns)
	svcs := newServices(t, f)
	generic.RegisterGeneratingHandler(t.Context(), svcs, newApplier(t, cp.Config(), f), serviceStatus, generated, "children",
		func(svc *corev1.Service, st corev1.ServiceStatus) ([]runtime.Object, corev1.ServiceStatus, error) {
			switch {
			case svc.Name == "cluster":
				return []runtime.Object{&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "gen-" + ns}}}, st, nil
			case svc.Labels["drop"] != "":
				return nil, st, nil
			}
			return []runtime.Object{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "child", Namespace: other}}}, st, nil
		}, &generic.GeneratingHandlerOptions{AllowCrossNamespace: true, Set: generic.SetOptions{NoDelete: true}})
	var mu sync.Mutex
	dropped := false // a round (apply included) ran for the owner that returns nothing
	svcs.OnChange(t.Context(), "after", func(key string, svc *corev1.Service) (*corev1.Service, error) {
		mu.Lock()
		defer mu.Unlock()
		dropped = dropped || (svc != nil && svc.Labels["drop"] != "")
		return nil, nil
	})
	createService(t, ns, "cross", 80)
	createService(t, ns, "cluster", 80)
	start(t, f)
	eventually(t, "the cross-namespace child", func() bool {
		_, err := kube().CoreV1().ConfigMaps(other).Get(t.Context(), "child", metav1.GetOptions{})
		return err == nil && generated.IsTrue(getService(t, ns, "cross").Status.Conditions)
	})
	eventually(t, "cluster-scoped refused", func() bool {
		c := generated.Get(getService(t, ns, "cluster").Status.Conditions)
		return c != nil && c.Status == metav1.ConditionFalse && strings.Contains(c.Message, "cluster-scoped")
	})
	if _, err := kube().RbacV1().ClusterRoles().Get(t.Context(), "gen-"+ns, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("a cluster-scoped child was written without AllowClusterScoped: %v", err)
	}
	updateService(t, ns, "cross", func(s *corev1.Service) { s.Labels = map[string]string{"drop": "yes"} })
	eventually(t, "a round without the child", func() bool { mu.Lock(); defer mu.Unlock(); return dropped })
	if _, err := kube().CoreV1().ConfigMaps(other).Get(t.Context(), "child", metav1.GetOptions{}); err != nil {
		t.Fatalf("the child was pruned although Set.NoDelete: %v", err)
	}
}
