package dependents_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/internal/dependentstest"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
)

// TestViewFailureFeedsTheRefusalBack: the handler asks for a node port
// another Service (not the registration's) holds; the API server refuses
// the Service, the handler is computed again with View.Failure saying so,
// keeps the port as refused (its own state, in the loop's order) and asks
// for another: the Service is created with a port the API server gives.
// This is what the WebApp operator's port allocator does with its
// PortRefused event.
func TestViewFailureFeedsTheRefusalBack(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	kube := controlplanetest.Clientset(cp.Config())
	holder, err := kube.CoreV1().Services(ns).Create(t.Context(), &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "holder"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort,
			Ports: []corev1.ServicePort{{Name: "http", Port: 80}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	held := holder.Spec.Ports[0].NodePort
	svcGVK := corev1.SchemeGroupVersion.WithKind("Service")
	var mu sync.Mutex
	refused := map[int32]bool{} // the handler's own state: only the loop calls it
	var failures []string       // what View.Failure said, for the test
	expose := func(app *demov1.WebApp, view dependents.View[*demov1.WebApp]) ([]*dependents.Object, error) {
		if app.Namespace != ns {
			return nil, nil
		}
		if err := view.Failure(svcGVK, ns, app.Name); err != nil && strings.Contains(err.Error(), "already allocated") {
			mu.Lock()
			failures = append(failures, err.Error())
			mu.Unlock()
			refused[held] = true
		}
		port := corev1.ServicePort{Name: "http", Port: 80}
		if !refused[held] {
			port.NodePort = held
		}
		return []*dependents.Object{dependents.Of(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: app.Name},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{port}}})}, nil
	}
	f, webapps := dependentstest.Factory(t, cp.Config(), nil)
	d, err := dependents.RegisterView(t.Context(), f, webapps, webAppStatus(), "failure-test", expose, dependents.Options{
		FieldManager: "failure-test", Kinds: []schema.GroupVersionKind{svcGVK}, Logger: controlplanetest.QuietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Start(t.Context(), 2); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(t.Context()), time.Minute)
		defer cancel()
		if err := d.Wait(ctx); err != nil {
			t.Errorf("stopping: %v", err)
		}
	})
	if _, err := webapps.Create(t.Context(), &demov1.WebApp{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: demov1.WebAppSpec{Image: "web:1"}}); err != nil {
		t.Fatal(err)
	}
	var got int32
	controlplanetest.Eventually(t, wait, "the Service created with another node port", func() bool {
		svc, err := kube.CoreV1().Services(ns).Get(t.Context(), "web", metav1.GetOptions{})
		if err != nil || len(svc.Spec.Ports) == 0 {
			return false
		}
		got = svc.Spec.Ports[0].NodePort
		return true
	})
	if got == held || got == 0 {
		t.Fatalf("the Service has node port %d, the holder's is %d", got, held)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(failures) == 0 {
		t.Fatal("the handler never read the API server's refusal through View.Failure")
	}
	controlplanetest.Eventually(t, wait, "the owner's condition: the Service ready, nothing failed", func() bool {
		return readyMessage(t, webapps, ns, "web") == "ready: Service web"
	})
}
