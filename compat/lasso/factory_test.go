package lasso_test

import (
	"strings"
	"testing"
	"time"

	lassocontroller "github.com/rancher/lasso/pkg/controller"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
)

// TestForResourceErrorNamesTheResourceOnce: lasso's ForResource has no
// error, so an unserved resource's failure comes from Start, saying once
// which controller failed and why.
func TestForResourceErrorNamesTheResourceOnce(t *testing.T) {
	e := newEnv(t, nil, 5*time.Second)
	gvr := schema.GroupVersionResource{Group: "missing.lariat.dev", Version: "v1", Resource: "gadgets"}
	if sc := e.adapter.ForResource(gvr, true); sc == nil {
		t.Fatal("ForResource returned no controller for an unserved resource")
	}
	err := e.adapter.Start(t.Context(), 1)
	if err == nil {
		t.Fatal("Start did not report the unserved resource")
	}
	prefix := "controller for " + gvr.String() + ": "
	if msg := err.Error(); strings.Count(msg, prefix) != 1 {
		t.Fatalf("Start's error %q: want %q once", msg, prefix)
	}
}

// TestForObject: ForObject gives the shared controller of the object's kind
// (the one ForKind gives), whose handlers see the kind's objects and whose
// lasso client reads them from the API server.
func TestForObject(t *testing.T) {
	e := newEnv(t, nil, 0)
	sc, err := e.adapter.ForObject(&corev1.ConfigMap{})
	if err != nil {
		t.Fatal(err)
	}
	byKind, err := e.adapter.ForKind(configMapGVK)
	if err != nil {
		t.Fatal(err)
	}
	if sc != byKind {
		t.Fatal("ForObject and ForKind gave different controllers for ConfigMap")
	}
	s := newSeen()
	sc.RegisterHandler(t.Context(), "record", lassocontroller.SharedControllerHandlerFunc(func(key string, obj runtime.Object) (runtime.Object, error) {
		if cm, ok := obj.(*corev1.ConfigMap); ok {
			s.record(key, cm)
		}
		return obj, nil
	}))
	if err := e.adapter.Start(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	if _, err := e.kube.CoreV1().ConfigMaps(e.ns).Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}, Data: map[string]string{"v": "1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the handler sees the ConfigMap", func() bool { return len(s.get(e.ns+"/cm")) > 0 })
	var cm corev1.ConfigMap
	if err := sc.Client().Get(t.Context(), e.ns, "cm", &cm, metav1.GetOptions{}); err != nil || cm.Data["v"] != "1" {
		t.Fatalf("Get through ForObject's client: %v, %v", cm.Data, err)
	}
	// An object of no kind the scheme knows has no controller.
	if sc, err := e.adapter.ForObject(&unknown{}); err == nil || sc != nil {
		t.Fatalf("ForObject of a kind outside the scheme: %v, %v; want no controller and an error", sc, err)
	}
}

// unknown is a kind no scheme registers.
type unknown struct{ corev1.ConfigMap }

func (u *unknown) DeepCopyObject() runtime.Object { c := *u; return &c }

// TestCacheFactoryInformersHaveTheNamespaceIndex: informers handed out by
// the cache factory carry client-go's namespace index for namespaced
// kinds, as lasso's do, and not for cluster-scoped ones.
func TestCacheFactoryInformersHaveTheNamespaceIndex(t *testing.T) {
	e := newEnv(t, nil, 0)
	caches := e.adapter.SharedCacheFactory()
	for _, tc := range []struct {
		gvk  schema.GroupVersionKind
		want bool
	}{
		{corev1.SchemeGroupVersion.WithKind("Secret"), true},
		{corev1.SchemeGroupVersion.WithKind("Namespace"), false},
	} {
		informer, err := caches.ForKind(tc.gvk)
		if err != nil {
			t.Fatal(err)
		}
		if _, got := informer.GetIndexer().GetIndexers()[toolscache.NamespaceIndex]; got != tc.want {
			t.Errorf("%s: namespace index %t, want %t", tc.gvk.Kind, got, tc.want)
		}
	}
}
