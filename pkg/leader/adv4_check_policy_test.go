package leader_test

import (
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// TestAdv4CheckTermPolicyNamesABindingThatDoesNotRefuse: CheckTermPolicy
// (and the warning of WithTermPolicyCheck) is how an operator learns that
// its creates are not fenced; TermPolicyError is documented to name each
// object "missing or not as InstallTermPolicy writes it". It reads only
// the binding's policy name and parameter: a binding whose
// validationActions only warn (or audit), or whose selector matches
// nothing, passes the check while the API server admits every stale
// create. Here the binding warns instead of denying: a create stamped
// with a term the Lease never had is admitted, and the check says the
// fence is installed.
func TestAdv4CheckTermPolicyNamesABindingThatDoesNotRefuse(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	installTermPolicy(t, ns, "lease")
	kube := controlplanetest.Clientset(cp.Config())
	adm := kube.AdmissionregistrationV1()
	holder := "someone"
	if _, err := kube.CoordinationV1().Leases(ns).Create(t.Context(), &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "lease", Labels: map[string]string{leader.TermIDLabel: "current"}},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The control: as InstallTermPolicy writes them (and the API server
	// defaults them), the policy and binding pass the check.
	if err := leader.CheckTermPolicy(t.Context(), adm, ns, "lease"); err != nil {
		t.Fatalf("CheckTermPolicy of the installed fence: %v", err)
	}
	name := leader.TermPolicyBindingName(ns, "lease")
	b, err := adm.ValidatingAdmissionPolicyBindings().Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b.Spec.ValidationActions = []admissionv1.ValidationAction{admissionv1.Warn}
	if _, err := adm.ValidatingAdmissionPolicyBindings().Update(t.Context(), b, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The API server applies the binding as changed: a stale stamp passes.
	stale := ns + "/lease/nobody/none"
	eventually(t, "the warning binding in force", func() bool {
		err := dryRunStamped(t.Context(), ns, stale)
		if err != nil && !leader.IsTermRefused(err) {
			t.Fatal(err)
		}
		return err == nil
	})
	if err := leader.CheckTermPolicy(t.Context(), adm, ns, "lease"); err == nil {
		t.Errorf("CheckTermPolicy says the term fence of %s/lease is installed, while its binding %s only warns and a create stamped %s is admitted", ns, name, stale)
	}
}
