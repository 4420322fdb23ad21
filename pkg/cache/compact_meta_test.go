package cache

import (
	"maps"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestCompactObjectsShareEqualLabels: objects with equal labels share one
// map, objects with other labels keep theirs, and each object's metadata
// (as key functions, the namespace index and selectors read it) is its own.
func TestCompactObjectsShareEqualLabels(t *testing.T) {
	c, err := newCodec(&corev1.ConfigMap{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	store := func(name string, labels map[string]string) *compactObject {
		t.Helper()
		obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", ResourceVersion: name + "-rv", Labels: labels}}
		stored, err := c.encode(obj)
		if err != nil {
			t.Fatal(err)
		}
		return stored.(*compactObject)
	}
	a := store("a", map[string]string{"app": "web", "tier": "front"})
	b := store("b", map[string]string{"tier": "front", "app": "web"})
	other := store("c", map[string]string{"app": "web", "tier": "back"})
	// "a=b" with "" against "a" with "b=": keys and values are not run together.
	x := store("x", map[string]string{"a=b": ""})
	y := store("y", map[string]string{"a": "b="})

	if reflect.ValueOf(a.Labels).UnsafePointer() != reflect.ValueOf(b.Labels).UnsafePointer() {
		t.Errorf("objects with equal labels hold two maps")
	}
	for _, tc := range []struct {
		o      *compactObject
		labels map[string]string
	}{
		{a, map[string]string{"app": "web", "tier": "front"}},
		{b, map[string]string{"app": "web", "tier": "front"}},
		{other, map[string]string{"app": "web", "tier": "back"}},
		{x, map[string]string{"a=b": ""}},
		{y, map[string]string{"a": "b="}},
	} {
		var m metav1.Object = tc.o
		if got := m.GetLabels(); !maps.Equal(got, tc.labels) {
			t.Errorf("%s: labels %v, want %v", m.GetName(), got, tc.labels)
		}
		if m.GetNamespace() != "ns" || m.GetResourceVersion() != m.GetName()+"-rv" {
			t.Errorf("%s: namespace %q, resourceVersion %q", m.GetName(), m.GetNamespace(), m.GetResourceVersion())
		}
	}
}
