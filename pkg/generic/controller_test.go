package generic_test

import (
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/lariat-dev/lariat/internal/testkinds"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/generic"
)

// What generated code relies on: the concrete types satisfy the interfaces
// that generated <Kind>Controller, <Kind>Client and <Kind>Cache embed.
var (
	_ generic.ControllerInterface[*corev1.ConfigMap, *corev1.ConfigMapList]                  = (*generic.Controller[*corev1.ConfigMap, *corev1.ConfigMapList])(nil)
	_ generic.ClientInterface[*corev1.ConfigMap, *corev1.ConfigMapList]                      = (*generic.Client[*corev1.ConfigMap, *corev1.ConfigMapList])(nil)
	_ generic.CacheInterface[*corev1.ConfigMap]                                              = (*generic.Cache[*corev1.ConfigMap])(nil)
	_ generic.NonNamespacedControllerInterface[*rbacv1.ClusterRole, *rbacv1.ClusterRoleList] = (*generic.NonNamespacedController[*rbacv1.ClusterRole, *rbacv1.ClusterRoleList])(nil)
	_ generic.NonNamespacedClientInterface[*rbacv1.ClusterRole, *rbacv1.ClusterRoleList]     = (*generic.NonNamespacedClient[*rbacv1.ClusterRole, *rbacv1.ClusterRoleList])(nil)
	_ generic.NonNamespacedCacheInterface[*rbacv1.ClusterRole]                               = (*generic.NonNamespacedCache[*rbacv1.ClusterRole])(nil)
)

// seen records what a typed handler was given, per key.
type seen struct {
	mu    sync.Mutex
	last  map[string]*corev1.ConfigMap // nil once deleted
	calls map[string]int
}

func newSeen() *seen {
	return &seen{last: map[string]*corev1.ConfigMap{}, calls: map[string]int{}}
}

func (s *seen) record(key string, cm *corev1.ConfigMap) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[key]++
	if cm == nil {
		s.last[key] = nil
	} else {
		s.last[key] = cm.DeepCopy()
	}
}

func (s *seen) get(key string) (cm *corev1.ConfigMap, ok bool, calls int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cm, ok = s.last[key]
	return cm, ok, s.calls[key]
}

func TestOnChangeTyped(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	f := newFactory(t, cp.Config(), ns)
	cms := newConfigMaps(t, f)
	rec := newSeen()
	cms.OnChange(t.Context(), "record", func(key string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
		rec.record(key, cm)
		return nil, nil
	})
	start(t, f)

	key := ns + "/a"
	created := createCM(t, ns, "a")
	eventually(t, "create", func() bool { cm, _, _ := rec.get(key); return cm != nil && cm.UID == created.UID })

	cm := getCM(t, ns, "a")
	cm.Data["v"] = "1"
	if _, err := kube().CoreV1().ConfigMaps(ns).Update(t.Context(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "update", func() bool { cm, _, _ := rec.get(key); return cm != nil && cm.Data["v"] == "1" })

	_, _, before := rec.get(key)
	cms.Enqueue(ns, "a")
	eventually(t, "enqueue", func() bool { _, _, calls := rec.get(key); return calls > before })

	if err := kube().CoreV1().ConfigMaps(ns).Delete(t.Context(), "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "delete as nil", func() bool { cm, ok, _ := rec.get(key); return ok && cm == nil })
}

func TestOnChangeChainsTypedResults(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	f := newFactory(t, cp.Config(), ns)
	cms := newConfigMaps(t, f)
	// first passes on an annotated copy of "changed" and nothing (the zero
	// value) for "same"; second records what it is given.
	cms.OnChange(t.Context(), "first", func(key string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
		if cm == nil || cm.Name != "changed" {
			return nil, nil
		}
		cm = cm.DeepCopy()
		cm.Annotations = map[string]string{"touched-by": "first"}
		return cm, nil
	})
	rec := newSeen()
	cms.OnChange(t.Context(), "second", func(key string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
		rec.record(key, cm)
		return cm, nil
	})
	start(t, f)

	createCM(t, ns, "changed")
	createCM(t, ns, "same")
	eventually(t, "both handled", func() bool {
		a, _, _ := rec.get(ns + "/changed")
		b, _, _ := rec.get(ns + "/same")
		return a != nil && b != nil
	})
	if got, _, _ := rec.get(ns + "/changed"); got.Annotations["touched-by"] != "first" {
		t.Errorf("second handler got %v, want the object the first returned", got.Annotations)
	}
	if got, _, _ := rec.get(ns + "/same"); got.Annotations["touched-by"] != "" {
		t.Errorf("second handler got %v, want the cached object unchanged", got.Annotations)
	}
	if cached, err := cms.Cache().Get(ns, "changed"); err != nil || cached.Annotations["touched-by"] != "" {
		t.Errorf("the cached object was modified: %v, %v", cached, err)
	}
}

func TestUpdaterAndGenericHandler(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	f := newFactory(t, cp.Config(), ns)
	cms := newConfigMaps(t, f)
	update := cms.Updater()
	cms.AddGenericHandler(t.Context(), "label", func(key string, obj runtime.Object) (runtime.Object, error) {
		cm, ok := obj.(*corev1.ConfigMap)
		if !ok || cm.Labels["done"] == "yes" {
			return nil, nil
		}
		cm = cm.DeepCopy()
		cm.Labels = map[string]string{"done": "yes"}
		return update(t.Context(), cm)
	})
	start(t, f)
	createCM(t, ns, "a")
	eventually(t, "label written through the Updater", func() bool {
		cm, err := cms.Cache().Get(ns, "a")
		return err == nil && cm.Labels["done"] == "yes"
	})
	if _, err := update(t.Context(), &corev1.Secret{}); err == nil {
		t.Error("Updater accepted a Secret for ConfigMaps")
	}
}

// otherConfigMap is a Go type no scheme knows.
type otherConfigMap struct{ corev1.ConfigMap }

// valueObject satisfies RuntimeMetaObject without being a pointer.
type valueObject struct{ *metav1.ObjectMeta }

func (valueObject) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

func (v valueObject) DeepCopyObject() runtime.Object { return v }

// metaObject is an interface type, which satisfies RuntimeMetaObject too.
type metaObject interface {
	runtime.Object
	metav1.Object
}

func TestNewControllerRejectsBadTypes(t *testing.T) {
	f := newFactory(t, cp.Config(), "unused")
	factory := f.ControllerFactory()
	widgets := testkinds.WidgetGVK
	cases := map[string]func() error{
		"type not in the scheme": func() error {
			_, err := generic.NewController[*otherConfigMap, *corev1.ConfigMapList](widgets, "widgets", true, factory)
			return err
		},
		"type of another kind": func() error {
			_, err := generic.NewController[*corev1.Secret, *corev1.SecretList](configMapGVK, "configmaps", true, factory)
			return err
		},
		"list of another kind": func() error {
			_, err := generic.NewController[*corev1.ConfigMap, *corev1.SecretList](configMapGVK, "configmaps", true, factory)
			return err
		},
		"typed object for an unstructured kind": func() error {
			_, err := generic.NewController[*corev1.ConfigMap, *corev1.ConfigMapList](widgets, "widgets", true, factory)
			return err
		},
		"unstructured object for a typed kind": func() error {
			_, err := generic.NewController[*unstructured.Unstructured, *unstructured.UnstructuredList](configMapGVK, "configmaps", true, factory)
			return err
		},
		"not a pointer": func() error {
			_, err := generic.NewController[valueObject, *corev1.ConfigMapList](configMapGVK, "configmaps", true, factory)
			return err
		},
		"interface type": func() error {
			_, err := generic.NewController[metaObject, *corev1.ConfigMapList](configMapGVK, "configmaps", true, factory)
			return err
		},
		"no resource": func() error {
			_, err := generic.NewController[*corev1.ConfigMap, *corev1.ConfigMapList](configMapGVK, "", true, factory)
			return err
		},
		"no kind": func() error {
			_, err := generic.NewController[*corev1.ConfigMap, *corev1.ConfigMapList](schema.GroupVersionKind{}, "configmaps", true, factory)
			return err
		},
		"no factory": func() error {
			_, err := generic.NewController[*corev1.ConfigMap, *corev1.ConfigMapList](configMapGVK, "configmaps", true, nil)
			return err
		},
		"no client factory": func() error {
			_, err := generic.NewClient[*corev1.ConfigMap, *corev1.ConfigMapList](configMapGVK, "configmaps", true, nil)
			return err
		},
	}
	for name, build := range cases {
		t.Run(name, func(t *testing.T) {
			err := build()
			if err == nil {
				t.Fatal("no error")
			}
			t.Log(err)
		})
	}
	if informers := factory.SharedCacheFactory().Informers(); len(informers) != 0 {
		t.Errorf("failed constructors created informers: %v", informers)
	}
}

func TestUnstructuredKind(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	f := newFactory(t, cp.Config(), ns)
	widgets, err := generic.NewController[*unstructured.Unstructured, *unstructured.UnstructuredList](testkinds.WidgetGVK, "widgets", true, f.ControllerFactory())
	if err != nil {
		t.Fatal(err)
	}
	var handled counter
	widgets.OnChange(t.Context(), "count", func(key string, w *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		if w != nil {
			handled.inc()
		}
		return nil, nil
	})
	ctx := start(t, f)
	created, err := widgets.Create(ctx, testkinds.Widget(ns, "w", 3))
	if err != nil {
		t.Fatal(err)
	}
	if created.GroupVersionKind() != testkinds.WidgetGVK {
		t.Errorf("created widget has kind %v", created.GroupVersionKind())
	}
	if err := unstructured.SetNestedField(created.Object, true, "status", "ready"); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(created.Object, int64(9), "spec", "size"); err != nil {
		t.Fatal(err)
	}
	updated, err := widgets.UpdateStatus(ctx, created)
	if err != nil {
		t.Fatal(err)
	}
	ready, _, _ := unstructured.NestedBool(updated.Object, "status", "ready")
	size, _, _ := unstructured.NestedInt64(updated.Object, "spec", "size")
	if !ready || size != 3 {
		t.Errorf("UpdateStatus wrote ready=%v and size %d; want the status only (true, 3)", ready, size)
	}
	eventually(t, "widget handled", func() bool { return handled.get() > 0 })
}
