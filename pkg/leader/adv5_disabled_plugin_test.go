package leader_test

import (
	"errors"
	"strings"
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
// warning) said nothing. It now sends a dry-run create stamped with a
// term the Lease is not in, which must be refused, and names the
// admission plugin when it is admitted (for a minute: a policy installed
// moments ago is enforced once the API server's informers have it, so
// this test waits that long).
func TestAdv5CheckTermPolicyNamesAnAPIServerThatDoesNotEnforceIt(t *testing.T) {
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
	err = leader.CheckTermPolicy(t.Context(), adm, ns, "lease")
	var tpe *leader.TermPolicyError
	if !errors.As(err, &tpe) || len(tpe.Missing) != 1 || !strings.Contains(tpe.Missing[0], "ValidatingAdmissionPolicy admission plugin") {
		t.Errorf("CheckTermPolicy on an API server that admitted a create of an ended term (the ValidatingAdmissionPolicy plugin is off): %v, "+
			"want a *TermPolicyError naming the admission plugin", err)
	}
	// The probe was a dry run: no Lease but the test's.
	leases, err := kube.CoordinationV1().Leases(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(leases.Items) != 1 {
		t.Errorf("%d Leases in %s after CheckTermPolicy, want only the test's: its probe must store nothing", len(leases.Items), ns)
	}
}
