package shard

import (
	"slices"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestAdv16RingGuardBindingRecreatedByAnotherActorIsAppliedAgain: the ring
// guard's binding deleted and created again under its name by another
// actor (an installer holding an older manifest of it) with a spec that
// refuses nothing (validationActions Audit, matching no namespace) is
// taken back by the elected sharder: the binding the other actor created
// (its UID) is given the guard's spec again and a user's write of the
// ring's label is refused. The keeper applies the guard on the created
// object's arrival as on an edit (held: it passed on the first run).
func TestAdv16RingGuardBindingRecreatedByAnotherActorIsAppliedAgain(t *testing.T) {
	admin, ring := advElectedGuardingSharder(t, "advguardrecreated")
	ctx := t.Context()
	bindings := admin.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings()
	theirs := &admissionv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: RingPolicyName(ring)},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        RingPolicyName(ring),
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Audit},
			MatchResources: &admissionv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{"no-namespace-has-this": "label"}}},
		},
	}
	// The sharder may create its binding again between the other actor's
	// delete and create: the other actor tries again, as an installer
	// would.
	var created *admissionv1.ValidatingAdmissionPolicyBinding
	for i := 0; created == nil; i++ {
		if i == 50 {
			t.Fatal("the other actor could not create its binding in 50 tries: the sharder created the guard's first each time")
		}
		if err := bindings.Delete(ctx, RingPolicyName(ring), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		c, err := bindings.Create(ctx, theirs.DeepCopy(), metav1.CreateOptions{FieldManager: "other-installer"})
		switch {
		case err == nil:
			created = c
		case !apierrors.IsAlreadyExists(err):
			t.Fatal(err)
		}
	}
	user := adv11UserClient(cp.Config()).CoreV1().ConfigMaps(ring.Namespace)
	probe := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "guard-probe", Labels: map[string]string{AssignmentLabel(ring.Name): "someone"}}}
	refused := false
	var last, getErr error
	var got *admissionv1.ValidatingAdmissionPolicyBinding
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline) && !refused; time.Sleep(time.Second) {
		if got, getErr = bindings.Get(ctx, RingPolicyName(ring), metav1.GetOptions{}); getErr != nil ||
			!slices.Equal(got.Spec.ValidationActions, []admissionv1.ValidationAction{admissionv1.Deny}) || got.Spec.MatchResources != nil && got.Spec.MatchResources.NamespaceSelector != nil && len(got.Spec.MatchResources.NamespaceSelector.MatchLabels) > 0 {
			continue
		}
		_, last = user.Create(ctx, probe.DeepCopy(), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		refused = adv11RefusedByGuard(last, ring)
	}
	if !refused {
		var spec any
		if got != nil {
			spec = got.Spec
		}
		t.Errorf("two minutes after another actor created the ring guard's binding again with a spec that refuses nothing (UID %s), the running sharder has not applied the guard to it (spec %+v, get: %v) or a user's create carrying the ring's label is admitted (err %v)",
			created.UID, spec, getErr, last)
	}
}
