package leader_test

import (
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/controlplane"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// TestAdv5CheckTermPolicyNamesAnAPIServerThatDoesNotEnforceIt:
// CheckTermPolicy is documented to name a policy or binding "that does
// not refuse", but it only reads the two objects. An API server whose
// ValidatingAdmissionPolicy admission plugin is off (a managed cluster's
// or a hardened flag set's --disable-admission-plugins; the API is
// still served, so the objects install) stores the policy and binding
// and enforces neither: a create stamped with a term the Lease never had
// is admitted, and CheckTermPolicy (and so WithTermPolicyCheck's
// warning) says nothing. A dry-run of a create stamped with a term the
// Lease is not in would tell.
func TestAdv5CheckTermPolicyNamesAnAPIServerThatDoesNotEnforceIt(t *testing.T) {
	advOpen(t, "CheckTermPolicy passes on an API server that does not enforce admission policies")
	own := controlplanetest.Start(t, controlplane.Options{APIServerFlags: []string{"--disable-admission-plugins=ValidatingAdmissionPolicy"}})
	ns := controlplanetest.Namespace(t, own.Config())
	kube := controlplanetest.Clientset(own.Config())
	adm := kube.AdmissionregistrationV1()
	if err := leader.InstallTermPolicy(t.Context(), adm, ns, "lease"); err != nil {
		t.Fatal(err)
	}
	holder := "a"
	if _, err := kube.CoordinationV1().Leases(ns).Create(t.Context(), &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "lease", Labels: map[string]string{leader.TermIDLabel: "1111111111111111"}},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The premise: a create of an ended term is admitted.
	_, err := kube.CoreV1().ConfigMaps(ns).Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "stale",
		Labels: map[string]string{leader.TermLeaseLabel: leader.TermLeaseLabelValue(ns, "lease"), leader.TermIDLabel: "0000000000000000"}}},
		metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("a stale create on an API server without the admission plugin: %v, want admitted (the test's premise)", err)
	}
	if err := leader.CheckTermPolicy(t.Context(), adm, ns, "lease"); err == nil {
		t.Errorf("CheckTermPolicy passed on an API server that admitted a create of an ended term (the ValidatingAdmissionPolicy plugin is off): want it named")
	}
}
