package generic_test

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/generic"
)

// TestStatusHandlerWhileDeletingWritesTheStatusOfAnObjectBeingDeleted: a
// Service held by a finalizer is deleted; a handler registered with
// WhileDeleting sees it and its condition is written (the API server takes
// a status write to an object being deleted).
func TestStatusHandlerWhileDeletingWritesTheStatusOfAnObjectBeingDeleted(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	f := newFactory(t, cp.Config(), ns)
	svcs := newServices(t, f)
	generic.RegisterStatusHandlerWith(t.Context(), svcs, serviceStatus, "", "status", generic.StatusOptions{WhileDeleting: true},
		func(svc *corev1.Service, st corev1.ServiceStatus) (corev1.ServiceStatus, error) {
			if svc.DeletionTimestamp != nil {
				generated.Set(&st.Conditions, metav1.ConditionFalse, svc.Generation, "Deleting", "being deleted")
			}
			return st, nil
		})
	_, err := kube().CoreV1().Services(ns).Create(t.Context(), &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Finalizers: []string{"test.lariat.dev/hold"}},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = kube().CoreV1().Services(ns).Patch(context.WithoutCancel(t.Context()), "web", types.MergePatchType,
			[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	})
	start(t, f)
	if err := kube().CoreV1().Services(ns).Delete(t.Context(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the condition of the Service being deleted says so", func() bool {
		svc, err := kube().CoreV1().Services(ns).Get(t.Context(), "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		c := generated.Get(svc.Status.Conditions)
		return svc.DeletionTimestamp != nil && c != nil && c.Message == "being deleted"
	})
}

// fakeStatusController hands the registered sync to the test and answers
// UpdateStatus with err.
type fakeStatusController struct {
	sync generic.ObjectHandler[*corev1.Service]
	err  error
}

func (f *fakeStatusController) OnChange(_ context.Context, _ string, sync generic.ObjectHandler[*corev1.Service]) {
	f.sync = sync
}

func (f *fakeStatusController) UpdateStatus(_ context.Context, _ *corev1.Service) (*corev1.Service, error) {
	return nil, f.err
}

func (f *fakeStatusController) GroupVersionKind() schema.GroupVersionKind {
	return corev1.SchemeGroupVersion.WithKind("Service")
}

// TestStatusHandlerWhileDeletingObjectGoneIsQuiet: the status write of an
// object being deleted that is gone meanwhile (its finalizers removed
// between the read and the write) is a quiet no-op, not an error retried;
// any other failure of the write is still returned. Without WhileDeleting
// the handler does not run for an object being deleted (as wrangler's).
func TestStatusHandlerWhileDeletingObjectGoneIsQuiet(t *testing.T) {
	deleting := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web",
		DeletionTimestamp: &metav1.Time{}, Finalizers: []string{"test.lariat.dev/hold"}}}
	ran := 0
	handler := func(svc *corev1.Service, st corev1.ServiceStatus) (corev1.ServiceStatus, error) {
		ran++
		generated.Set(&st.Conditions, metav1.ConditionFalse, svc.Generation, "Deleting", "being deleted")
		return st, nil
	}
	gone := &fakeStatusController{err: apierrors.NewNotFound(corev1.Resource("services"), "web")}
	generic.RegisterStatusHandlerWith(t.Context(), gone, serviceStatus, "", "status", generic.StatusOptions{WhileDeleting: true}, handler)
	if _, err := gone.sync("ns/web", deleting); err != nil || ran != 1 {
		t.Errorf("status write of an object being deleted, found gone: error %v (want none), handler ran %d times (want 1)", err, ran)
	}
	failing := &fakeStatusController{err: errors.New("connection refused")}
	generic.RegisterStatusHandlerWith(t.Context(), failing, serviceStatus, "", "status", generic.StatusOptions{WhileDeleting: true}, handler)
	if _, err := failing.sync("ns/web", deleting); err == nil {
		t.Errorf("a failed status write of an object being deleted was dropped")
	}
	plain := &fakeStatusController{}
	ran = 0
	generic.RegisterStatusHandler(t.Context(), plain, serviceStatus, "", "status", handler)
	if _, err := plain.sync("ns/web", deleting); err != nil || ran != 0 {
		t.Errorf("RegisterStatusHandler on an object being deleted: error %v, handler ran %d times (want 0)", err, ran)
	}
}
