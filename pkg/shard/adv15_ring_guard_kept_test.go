package shard

import (
	"slices"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestAdv15RingGuardEditedWhileTheSharderRunsIsAppliedAgain: the ring
// guard's policy edited while the sharder runs (kubectl edit adding a
// matchCondition "false", which makes the guard admit every write) is
// noticed by the elected sharder, which applies the guard's whole spec
// again (ringpolicy_keep.go): the added condition goes and a user's write
// of the ring's label is refused again. Before, the guard stayed edited
// until the sharder restarted.
func TestAdv15RingGuardEditedWhileTheSharderRunsIsAppliedAgain(t *testing.T) {
	admin, ring := advElectedGuardingSharder(t, "advguardkept")
	ctx, vap := t.Context(), admin.AdmissionregistrationV1().ValidatingAdmissionPolicies()
	p, err := vap.Get(ctx, RingPolicyName(ring), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Spec.MatchConditions = append(p.Spec.MatchConditions, admissionv1.MatchCondition{Name: "unblock-sync", Expression: "false"})
	edited, err := vap.Update(ctx, p, metav1.UpdateOptions{FieldManager: "kubectl-edit"})
	if err != nil {
		t.Fatal(err)
	}
	user := adv11UserClient(cp.Config()).CoreV1().ConfigMaps(ring.Namespace)
	probe := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "guard-probe", Labels: map[string]string{AssignmentLabel(ring.Name): "someone"}}}
	refused := false
	var last error
	var got *admissionv1.ValidatingAdmissionPolicy
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline) && !refused; time.Sleep(time.Second) {
		if got, err = vap.Get(ctx, RingPolicyName(ring), metav1.GetOptions{}); err != nil || got.Generation == edited.Generation ||
			slices.ContainsFunc(got.Spec.MatchConditions, func(c admissionv1.MatchCondition) bool { return c.Name == "unblock-sync" }) {
			continue
		}
		_, last = user.Create(ctx, probe.DeepCopy(), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		refused = adv11RefusedByGuard(last, ring)
	}
	if !refused {
		var conds []admissionv1.MatchCondition
		if got != nil {
			conds = got.Spec.MatchConditions
		}
		t.Errorf("two minutes after the ring guard's policy was edited by hand, the running sharder has not applied it again (match conditions %+v, get: %v) or a user's create carrying the ring's label is admitted (err %v)",
			conds, err, last)
	}
}
