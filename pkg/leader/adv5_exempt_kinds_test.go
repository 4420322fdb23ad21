package leader_test

import (
	"context"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestAdv5StalledCreateOfAnAdmissionKindNeverLandsAfterTheTerm: the API
// server never runs ValidatingAdmissionPolicies on the policies and
// bindings themselves (admissionregistration.k8s.io's policy kinds are
// exempt, so that no policy can lock itself in; webhook configurations,
// tried too, are judged and refused). An operator that creates policies
// or bindings (a policy engine, an operator installing its own guard
// rails) creates them through the fence like any child: stamped, but the
// term policy never judges the stamp, and a create held in the network
// past the term lands after it.
func TestAdv5StalledCreateOfAnAdmissionKindNeverLandsAfterTheTerm(t *testing.T) {
	advOpen(t, "creates of ValidatingAdmissionPolicies are stamped but never judged, and land after their term")
	ns := controlplanetest.Namespace(t, cp.Config())
	installTermPolicy(t, ns, "lease")
	e := newElector(t, ns, "a")
	cfg, s := stalledOn(cp.Config(), "/validatingadmissionpolicies")
	k := kubernetes.NewForConfigOrDie(e.Fence(cfg))
	name := ns + "-stale-policy"
	var term string
	inTerm(t, e, func(ctx context.Context) {
		term = currentTerm(t, ns)
		waitAdmitted(t, ctx, ns, term)
		_, err := k.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx,
			&admissionv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: admissionv1.ValidatingAdmissionPolicySpec{
				MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
					RuleWithOperations: admissionv1.RuleWithOperations{Operations: []admissionv1.OperationType{admissionv1.Create},
						Rule: admissionv1.Rule{APIGroups: []string{"adv5.invalid"}, APIVersions: []string{"v1"}, Resources: []string{"nothing"}}}}}},
				Validations: []admissionv1.Validation{{Expression: "true"}}}}, metav1.CreateOptions{})
		if err == nil || !strings.Contains(err.Error(), "adv5: connection stalled") {
			t.Fatalf("create: %v, want held by the stalled connection", err)
		}
	})
	admin := controlplanetest.Clientset(cp.Config())
	t.Cleanup(func() {
		_ = admin.AdmissionregistrationV1().ValidatingAdmissionPolicies().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	eventually(t, "the ended term refused", func() bool { return dryRunStamped(t.Context(), ns, term) != nil })
	codes, answers := s.deliver(t)
	if len(codes) != 1 {
		t.Fatalf("%d creates held, want 1", len(codes))
	}
	if codes[0] < 400 {
		got, _ := admin.AdmissionregistrationV1().ValidatingAdmissionPolicies().Get(t.Context(), name, metav1.GetOptions{})
		t.Errorf("the ValidatingAdmissionPolicy create sent in term %s landed after the term was over (%d), stamped %v: "+
			"want refused by the term policy", term, codes[0], got.GetLabels())
	} else {
		t.Logf("refused: %d %.300s", codes[0], answers[0])
	}
}
