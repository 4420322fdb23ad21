package shard

import (
	"context"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"k8s.io/client-go/kubernetes"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// TestAdv13RingGuardDeletedWhileTheSharderRunsStaysGone: the sharder
// installs the ring guard once, before it campaigns
// (SharderOptions.RingPolicy). Its binding deleted while the sharder runs
// (a cleanup of cluster-scoped objects no manifest lists, an uninstall of
// another release's policies) is not applied again: the running sharder
// neither notices nor says so, and every user's write of the ring's
// labels is admitted until the sharder restarts. Fixed: the elected
// sharder watches the guard's policy and binding and applies them again
// (ringpolicy_keep.go).
func TestAdv13RingGuardDeletedWhileTheSharderRunsStaysGone(t *testing.T) {
	admin, ring := advElectedGuardingSharder(t, "advguarddel")
	ctx := t.Context()
	bindings := admin.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings()
	before, err := bindings.Get(ctx, RingPolicyName(ring), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := bindings.Delete(ctx, RingPolicyName(ring), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// The sharder may apply the binding again before the API server's
	// admission stops enforcing the deleted one, so the window in which
	// the guard admits is not waited for: a binding of another UID proves
	// the deletion, and the guard's refusal that it is enforced again.
	user := adv11UserClient(cp.Config()).CoreV1().ConfigMaps(ring.Namespace)
	probe := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "guard-probe", Labels: map[string]string{AssignmentLabel(ring.Name): "someone"}}}
	refused := false
	var last, getErr error
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline) && !refused; time.Sleep(time.Second) {
		var now *admissionv1.ValidatingAdmissionPolicyBinding
		if now, getErr = bindings.Get(ctx, RingPolicyName(ring), metav1.GetOptions{}); getErr != nil || now.UID == before.UID {
			continue
		}
		_, last = user.Create(ctx, probe.DeepCopy(), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		refused = adv11RefusedByGuard(last, ring)
	}
	if !refused {
		t.Errorf("two minutes after the ring guard's binding was deleted, the running sharder has not applied it again (get: %v) or a user's create carrying the ring's label is admitted (err %v)", getErr, last)
	}
}

// advElectedGuardingSharder runs a sharder of a ConfigMap ring named name
// with the ring guard (SharderOptions.RingPolicy), and returns an admin
// client and the ring once the guard is enforced and the sharder elected;
// the guard's objects are deleted when the test ends.
func advElectedGuardingSharder(t *testing.T, name string) (kubernetes.Interface, Ring) {
	t.Helper()
	cfg := cp.Config()
	admin := controlplanetest.Clientset(cfg)
	ns := controlplanetest.Namespace(t, cfg)
	ring := Ring{Name: name, Namespace: ns, Kinds: []Kind{{GVK: corev1.SchemeGroupVersion.WithKind("ConfigMap")}}}
	s, err := NewSharder(cfg, ring, SharderOptions{Namespace: ns, RingPolicy: &RingPolicyOptions{},
		Leader: []leader.Option{leader.WithIdentity("sharder")}, Logger: controlplanetest.QuietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c := admin.AdmissionregistrationV1()
		_ = c.ValidatingAdmissionPolicyBindings().Delete(context.Background(), RingPolicyName(ring), metav1.DeleteOptions{})
		_ = c.ValidatingAdmissionPolicies().Delete(context.Background(), RingPolicyName(ring), metav1.DeleteOptions{})
	})
	controlplanetest.Run(t, s.Run)
	adv11GuardEnforced(t, ring)
	controlplanetest.Eventually(t, time.Minute, "the sharder is elected", s.Elector().Holding)
	return admin, ring
}
