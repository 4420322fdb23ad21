package leader_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// TestAdv5StalledCreateOfAnAdmissionKindNeverLandsAfterTheTerm: the API
// server never runs ValidatingAdmissionPolicies on the policies and
// bindings themselves (admissionregistration.k8s.io's policy kinds are
// exempt, so that no policy can lock itself in; webhook configurations,
// tried too, are judged and refused). An operator that creates policies
// or bindings (a policy engine, an operator installing its own guard
// rails) created them through the fence like any child: stamped, but the
// term policy never judged the stamp, and a create held in the network
// past the term landed after it. The fence now refuses, in its term, every
// write that may create such an object (a POST, a create-only apply), of
// the validating and the mutating kinds, with an *UnjudgedCreateError,
// unsent: nothing is held, nothing lands.
func TestAdv5StalledCreateOfAnAdmissionKindNeverLandsAfterTheTerm(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	installTermPolicy(t, ns, "lease")
	e := newElector(t, ns, "a")
	cfg, s := stalledOn(cp.Config(), "/validatingadmissionpolicies", "/validatingadmissionpolicybindings",
		"/mutatingadmissionpolicies", "/mutatingadmissionpolicybindings")
	k := kubernetes.NewForConfigOrDie(e.Fence(cfg))
	name := ns + "-stale-policy"
	unjudged := func(what string, err error) {
		t.Helper()
		var u *leader.UnjudgedCreateError
		if !errors.As(err, &u) {
			t.Errorf("%s through the fence in its term: %v, want an *UnjudgedCreateError (the API server never judges its stamp)", what, err)
		}
	}
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
		unjudged("a create of a ValidatingAdmissionPolicy", err)
		// pkg/apply's create-only apply (the resourceVersion no object has).
		apply := fmt.Sprintf(`{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingAdmissionPolicyBinding",`+
			`"metadata":{"name":%q,"resourceVersion":"18446744073709551615"},"spec":{"policyName":%q,"validationActions":["Deny"]}}`, name, name)
		_, err = k.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Patch(ctx, name, types.ApplyPatchType, []byte(apply),
			metav1.PatchOptions{FieldManager: "adv5"})
		unjudged("a create-only apply of a ValidatingAdmissionPolicyBinding", err)
		for _, resource := range []string{"mutatingadmissionpolicies", "mutatingadmissionpolicybindings"} {
			err = k.AdmissionregistrationV1().RESTClient().Post().AbsPath("/apis/admissionregistration.k8s.io/v1beta1", resource).
				SetHeader("Content-Type", "application/json").Body([]byte(`{"metadata":{"name":"` + name + `"}}`)).Do(ctx).Error()
			unjudged("a create of "+resource, err)
		}
	})
	admin := controlplanetest.Clientset(cp.Config())
	t.Cleanup(func() {
		_ = admin.AdmissionregistrationV1().ValidatingAdmissionPolicies().Delete(context.Background(), name, metav1.DeleteOptions{})
		_ = admin.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	eventually(t, "the ended term refused", func() bool { return dryRunStamped(t.Context(), ns, term) != nil })
	codes, answers := s.deliver(t)
	for i := range codes {
		t.Errorf("a create sent in term %s was held, and delivered after the term: %d %.300s", term, codes[i], answers[i])
	}
	if got, err := admin.AdmissionregistrationV1().ValidatingAdmissionPolicies().Get(t.Context(), name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the ValidatingAdmissionPolicy refused in term %s exists after it: %v, labels %v", term, err, got.GetLabels())
	}
	if _, err := admin.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Get(t.Context(), name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the ValidatingAdmissionPolicyBinding refused in term %s exists after it: %v", term, err)
	}
}
