package leader_test

import (
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// TestAdv4DelayedEvictionOfAHandledPodConflicts: an eviction is a delete
// of the pod, sent as a POST to its eviction subresource. A handler that
// evicts the pod it handles (a drain controller) through the fence sends
// it with no resourceVersion precondition (the fence adds one to every
// write of a handled object except a POST) and without the term stamp
// (that is only for POSTs to a collection, and the policy matches no
// subresource). The eviction sits in the network; meanwhile someone else
// writes the pod (the next leader decides to keep it); then the eviction
// reaches the API server. It must fail with a conflict, as the delayed
// delete of TestEveryDelayedWriteOfAHandledObjectConflicts does (an
// Eviction's DeleteOptions carry preconditions the API server checks);
// instead it lands and the pod, still wanted, is gone.
func TestAdv4DelayedEvictionOfAHandledPodConflicts(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	e := leadingA(t, ns)

	admin := controlplanetest.Clientset(cp.Config()).CoreV1().Pods(ns)
	for _, wire := range []string{"application/json", "application/vnd.kubernetes.protobuf"} {
		t.Run(wire, func(t *testing.T) {
			delayPodWrite(t, e, admin, ns, wire, "eviction",
				func(fenced kubernetes.Interface, pod *corev1.Pod) error {
					return fenced.CoreV1().Pods(ns).EvictV1(t.Context(), &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pod.Name}})
				},
				func(after *corev1.Pod, getErr error) string {
					if apierrors.IsNotFound(getErr) {
						return "the pod is gone"
					}
					return ""
				})
		})
	}
}

// TestAdv4DelayedBindingOfAHandledPodConflicts: the same for a binding
// (POST pods/NAME/binding, what a scheduler sends): the fence adds no
// precondition to it although the API server checks one (the Binding's
// resourceVersion, compared with the pod's), so a binding decided in a
// term that sat in the network lands after the next leader wrote the pod
// (here: decided to hold it back), and the pod is bound to the node the
// old term chose.
func TestAdv4DelayedBindingOfAHandledPodConflicts(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	e := leadingA(t, ns)

	admin := controlplanetest.Clientset(cp.Config()).CoreV1().Pods(ns)
	for _, wire := range []string{"application/json", "application/vnd.kubernetes.protobuf"} {
		t.Run(wire, func(t *testing.T) {
			delayPodWrite(t, e, admin, ns, wire, "binding",
				func(fenced kubernetes.Interface, pod *corev1.Pod) error {
					return fenced.CoreV1().Pods(ns).Bind(t.Context(), &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pod.Name},
						Target: corev1.ObjectReference{Kind: "Node", Name: "chosen-in-the-old-term"}}, metav1.CreateOptions{})
				},
				func(after *corev1.Pod, getErr error) string {
					if getErr != nil {
						t.Fatal(getErr)
					}
					if after.Spec.NodeName != "" {
						return "the pod is bound to " + after.Spec.NodeName
					}
					return ""
				})
		})
	}
}

// delayPodWrite sends what of a new pod as wire through the fence (send), keeps
// it in the network while another writer changes the pod, then lets it land
// and fails unless it got a conflict and left the pod as the other writer
// made it (landed names what it changed, or returns "").
func delayPodWrite(t *testing.T, e *leader.Elector, admin typedcorev1.PodInterface, ns, wire, what string,
	send func(fenced kubernetes.Interface, pod *corev1.Pod) error, landed func(after *corev1.Pod, getErr error) string) {
	pod, err := admin.Create(t.Context(), &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "p-"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "none"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	net := &keptWrites{}
	cfg := e.Fence(net.wrap(cp.Config()))
	cfg.ContentType = wire
	fenced := kubernetes.NewForConfigOrDie(cfg)
	ref := controller.ObjectRef{Resource: "pods", Namespace: ns, Name: pod.Name}
	passDone := e.PassTracker().Handling(ref, pod.ResourceVersion)
	err = send(fenced, pod)
	passDone()
	kept := net.take()
	if kept == nil {
		t.Fatalf("the %s did not reach the network: %v", what, err)
	}
	// Another writer, while the write sits in the network.
	if _, err := admin.Patch(t.Context(), pod.Name, types.MergePatchType, []byte(`{"metadata":{"labels":{"other-writer":"yes"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	status := kept.replay(t)
	after, getErr := admin.Get(t.Context(), pod.Name, metav1.GetOptions{})
	if change := landed(after, getErr); status != http.StatusConflict || change != "" {
		t.Errorf("the delayed %s %s reached the API server after another write and got %d, want %d (a conflict); after it: %q; body %q",
			what, kept.url, status, http.StatusConflict, change, kept.body)
	}
}
