package leader_test

import (
	"context"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestAdv4PreconditionKeepsTheNumbersOfTheWrite: to add its
// resourceVersion precondition to a patch or update of a handled object,
// the fence decodes the JSON body into float64 numbers and encodes it
// again (objectPrecondition, and likewise for JSON patches and delete
// options; the create stamp keeps numbers as written). An integer above
// 2^53 (an int64 field: a deadline in seconds here, in custom resources a
// byte count, a uint64 ID, a time in nanoseconds) is then written as
// another number: the handler patches 9007199254740993 and the API server
// stores 9007199254740992. Lariat overwrites a value it did not mean to
// change, in every term, with no error. (The same patch through no fence,
// the control, is stored as sent.)
func TestAdv4PreconditionKeepsTheNumbersOfTheWrite(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	e := newElector(t, ns, "a")
	const want = int64(9007199254740993) // 2^53 + 1
	inTerm(t, e, func(ctx context.Context) {
		jobs := controlplanetest.Clientset(cp.Config()).BatchV1().Jobs(ns)
		deadline := int64(100)
		job, err := jobs.Create(ctx, &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Name: "j"},
			Spec: batchv1.JobSpec{ActiveDeadlineSeconds: &deadline, Suspend: ptrTo(true), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "none"}}}}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		passDone := e.PassTracker().Handling(controller.ObjectRef{Group: "batch", Resource: "jobs", Namespace: ns, Name: job.Name}, job.ResourceVersion)
		defer passDone()
		fenced := kubernetes.NewForConfigOrDie(e.Fence(cp.Config())).BatchV1().Jobs(ns)
		got, err := fenced.Patch(ctx, job.Name, types.MergePatchType, []byte(`{"spec":{"activeDeadlineSeconds":9007199254740993}}`), metav1.PatchOptions{})
		if err != nil {
			t.Fatalf("the handler's patch through the fence: %v", err)
		}
		if got.Spec.ActiveDeadlineSeconds == nil || *got.Spec.ActiveDeadlineSeconds != want {
			t.Errorf("the handler patched activeDeadlineSeconds %d through the fence; the API server stored %v", want, *got.Spec.ActiveDeadlineSeconds)
		}
		// The control: the same patch through no fence is stored as sent.
		direct, err := jobs.Patch(ctx, job.Name, types.MergePatchType, []byte(`{"spec":{"activeDeadlineSeconds":9007199254740993}}`), metav1.PatchOptions{})
		if err != nil || *direct.Spec.ActiveDeadlineSeconds != want {
			t.Fatalf("the control, the patch through no fence: %v, stored %v", err, direct.Spec.ActiveDeadlineSeconds)
		}
	})
}

func ptrTo[T any](v T) *T { return &v }
