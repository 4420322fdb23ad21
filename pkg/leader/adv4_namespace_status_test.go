package leader_test

import (
	"context"
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestAdv4DelayedWriteOfAHandledNamespacesStatusConflicts: the fence
// reads /api/v1/namespaces/NAME/status and /api/v1/namespaces/NAME/finalize
// as the collection "status" (or "finalize") in the namespace NAME, with no
// object name, so a handler of Namespaces (a project or tenant controller)
// that writes the status or the finalizers of the namespace it handles
// gets no resourceVersion precondition (and no stale-term refusal either).
// The write sits in the network while another writer changes the
// namespace, then lands: the delayed status patch and the delayed
// finalize of an object built without a version (the handler's "remove my
// finalizer") are accepted with 200 instead of a conflict, as replicas.md
// promises for updates and patches "of the object or of its status".
// (The same patch of the namespace itself, the control, conflicts.)
func TestAdv4DelayedWriteOfAHandledNamespacesStatusConflicts(t *testing.T) {
	leaseNS := controlplanetest.Namespace(t, cp.Config())
	e := leadingA(t, leaseNS)

	admin := controlplanetest.Clientset(cp.Config()).CoreV1().Namespaces()
	writes := map[string]func(ctx context.Context, nss typedcorev1.NamespaceInterface, name string) error{
		// The control: a patch of the namespace itself conflicts.
		"merge-patch": func(ctx context.Context, nss typedcorev1.NamespaceInterface, name string) error {
			_, err := nss.Patch(ctx, name, types.MergePatchType, []byte(`{"metadata":{"labels":{"handled":"old-term"}}}`), metav1.PatchOptions{})
			return err
		},
		"status-merge-patch": func(ctx context.Context, nss typedcorev1.NamespaceInterface, name string) error {
			_, err := nss.Patch(ctx, name, types.MergePatchType,
				[]byte(`{"status":{"conditions":[{"type":"HandledBy","status":"True","reason":"OldTerm"}]}}`), metav1.PatchOptions{}, "status")
			return err
		},
		"finalize-without-version": func(ctx context.Context, nss typedcorev1.NamespaceInterface, name string) error {
			_, err := nss.Finalize(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.UpdateOptions{})
			return err
		},
	}
	for what, write := range writes {
		t.Run(what, func(t *testing.T) {
			ns, err := admin.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "adv4-ns-"},
				Spec: corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{"kubernetes", "example.com/tenant"}}}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = admin.Delete(context.WithoutCancel(t.Context()), ns.Name, metav1.DeleteOptions{}) })
			net := &keptWrites{}
			fenced := kubernetes.NewForConfigOrDie(e.Fence(net.wrap(cp.Config()))).CoreV1().Namespaces()
			passDone := e.PassTracker().Handling(controller.ObjectRef{Resource: "namespaces", Name: ns.Name}, ns.ResourceVersion)
			err = write(t.Context(), fenced, ns.Name)
			passDone()
			kept := net.take()
			if kept == nil {
				t.Fatalf("the write did not reach the network: %v", err)
			}
			if _, err := admin.Patch(t.Context(), ns.Name, types.MergePatchType, []byte(`{"metadata":{"labels":{"other":"writer"}}}`), metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
			if status := kept.replay(t); status != http.StatusConflict {
				t.Errorf("the delayed %s %s reached the API server after another write and got %d, want %d (a conflict): body %q",
					kept.method, kept.url, status, http.StatusConflict, kept.body)
			}
		})
	}
}
