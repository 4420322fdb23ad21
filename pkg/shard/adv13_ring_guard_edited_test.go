package shard

import (
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/restmapper"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestAdv13RingGuardEditedByHandIsNotRepairedByItsInstall: the ring guard
// is installed by server-side apply, which removes only what its own field
// manager wrote before. A matchCondition that another field manager added
// to the policy (kubectl edit, while unblocking a GitOps sync the guard
// refused, and left there) makes the guard admit every write; a restarted
// sharder's install (SharderOptions.RingPolicy, or InstallRingPolicy)
// then returns nil, reporting the guard installed, while the API server
// still admitted a user's write of the ring's labels (h24p's attack). The
// install now replaces the whole spec of the policy and the binding, and
// proves the guard enforced before it returns.
func TestAdv13RingGuardEditedByHandIsNotRepairedByItsInstall(t *testing.T) {
	cfg := cp.Config()
	admin := controlplanetest.Clientset(cfg)
	ns := controlplanetest.Namespace(t, cfg)
	ring := Ring{Name: "advguardedit", Namespace: ns, Kinds: []Kind{{GVK: corev1.SchemeGroupVersion.WithKind("ConfigMap")}}}
	adv11Guard(t, ring)
	adv11GuardEnforced(t, ring)

	ctx, vap := t.Context(), admin.AdmissionregistrationV1().ValidatingAdmissionPolicies()
	p, err := vap.Get(ctx, RingPolicyName(ring), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Spec.MatchConditions = append(p.Spec.MatchConditions, admissionv1.MatchCondition{Name: "unblock-sync", Expression: "false"})
	if _, err := vap.Update(ctx, p, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	user := adv11UserClient(cfg).CoreV1().ConfigMaps(ns)
	probe := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "guard-probe", Labels: map[string]string{AssignmentLabel(ring.Name): "someone"}}}
	controlplanetest.Eventually(t, time.Minute, "the edited guard admits a user's dry-run create carrying the ring's label", func() bool {
		_, err := user.Create(ctx, probe.DeepCopy(), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err == nil
	})
	// The sharder restarts and installs the guard again: nil, "installed".
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(admin.Discovery()))
	if err := InstallRingPolicy(ctx, admin, mapper, ring, RingPolicyOptions{Namespace: ns}); err != nil {
		t.Fatal(err)
	}

	refused := false
	var last error
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline) && !refused; time.Sleep(500 * time.Millisecond) {
		_, last = user.Create(ctx, probe.DeepCopy(), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		refused = adv11RefusedByGuard(last, ring)
	}
	if !refused {
		got, err := vap.Get(ctx, RingPolicyName(ring), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Errorf("a minute after InstallRingPolicy returned nil, a user's create carrying the ring's label is admitted (err %v): the policy keeps the matchConditions %+v that another manager added", last, got.Spec.MatchConditions)
	}
}
