package controller_test

import (
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestPlaceholderReturnDoesNotHideTheObject: a handler that returns an
// empty object (no UID: &v1.ConfigMap{}, as wrangler handlers sometimes do
// for "nothing to report") must not hide the real object from the handlers
// registered after it, nor turn a deletion's nil into an object. lasso
// passes a returned object on only when it has a UID; so does Lariat.
func TestPlaceholderReturnDoesNotHideTheObject(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	f := newFactory(t, cp.Config(), ns, setup{})
	c := configMapController(t, f)
	c.RegisterHandler(t.Context(), "placeholder", controller.SharedHandlerFunc(func(string, runtime.Object) (runtime.Object, error) {
		return &corev1.ConfigMap{}, nil
	}))
	var mu sync.Mutex
	var seen []string // the name of each object the second handler got, "<nil>" for none
	c.RegisterHandler(t.Context(), "after", controller.SharedHandlerFunc(func(_ string, obj runtime.Object) (runtime.Object, error) {
		mu.Lock()
		defer mu.Unlock()
		if obj == nil {
			seen = append(seen, "<nil>")
		} else {
			seen = append(seen, obj.(*corev1.ConfigMap).Name)
		}
		return nil, nil
	}))
	start(t, f, 1)
	got := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...)
	}

	createCM(t, cp.Config(), ns, "real", map[string]string{"v": "1"})
	controlplanetest.Eventually(t, 30*time.Second, "the second handler called", func() bool { return len(got()) > 0 })
	if s := got(); s[0] != "real" {
		t.Fatalf("the handler after the placeholder got an object named %q, want the real object %q", s[0], "real")
	}
	if err := kube(cp.Config()).CoreV1().ConfigMaps(ns).Delete(t.Context(), "real", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, 30*time.Second, "the second handler called for the deletion", func() bool {
		s := got()
		return s[len(s)-1] != "real"
	})
	if s := got(); s[len(s)-1] != "<nil>" {
		t.Fatalf("the handler after the placeholder got %q for a deletion, want nil", s[len(s)-1])
	}
}
