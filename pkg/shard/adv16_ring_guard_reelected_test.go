package shard

import (
	"context"
	"slices"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// TestAdv16RingGuardEditedBetweenTermsIsAppliedByTheNextSharder: the ring
// guard's policy edited (a matchCondition "false") while no sharder keeps
// it, after the elected sharder stopped and before the standby, which
// installed the guard at its own start, long before, is elected: the
// standby's Run does not install it again, so only its term's keeper can
// take the edit back, from its first sight of the policy (an edit made
// while nobody watched sends it no event). Held: the next term applies
// the guard again and a user's write of the ring's label is refused.
func TestAdv16RingGuardEditedBetweenTermsIsAppliedByTheNextSharder(t *testing.T) {
	cfg := cp.Config()
	admin := controlplanetest.Clientset(cfg)
	ns := controlplanetest.Namespace(t, cfg)
	ring := Ring{Name: "advguardterms", Namespace: ns, Kinds: []Kind{{GVK: corev1.SchemeGroupVersion.WithKind("ConfigMap")}}}
	vap := admin.AdmissionregistrationV1().ValidatingAdmissionPolicies()
	t.Cleanup(func() {
		c := admin.AdmissionregistrationV1()
		_ = c.ValidatingAdmissionPolicyBindings().Delete(context.Background(), RingPolicyName(ring), metav1.DeleteOptions{})
		_ = c.ValidatingAdmissionPolicies().Delete(context.Background(), RingPolicyName(ring), metav1.DeleteOptions{})
	})
	start := func(identity string, opts ...leader.Option) (*Sharder, func()) {
		s, err := NewSharder(cfg, ring, SharderOptions{Namespace: ns, RingPolicy: &RingPolicyOptions{},
			Leader: append([]leader.Option{leader.WithIdentity(identity)}, opts...), Logger: controlplanetest.QuietLogger()})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- s.Run(ctx) }()
		stop := func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("sharder %s: %v", identity, err)
			}
		}
		t.Cleanup(func() { cancel() })
		return s, stop
	}
	first, stopFirst := start("sharder-first")
	adv11GuardEnforced(t, ring)
	controlplanetest.Eventually(t, time.Minute, "the first sharder is elected", first.Elector().Holding)
	// The standby retries seldom, so that the gap between the first's
	// release and its election is seconds wide.
	next, _ := start("sharder-next", leader.WithLeaseDuration(30*time.Second), leader.WithRenewDeadline(20*time.Second), leader.WithRetryPeriod(5*time.Second))
	controlplanetest.Eventually(t, time.Minute, "the standby installed the guard and campaigns (it saw the first holding)", func() bool {
		return next.Elector().Leader() == first.Elector().Identity()
	})
	stopFirst() // its term, and so its keeper, ended; the Lease is released
	var edited *admissionv1.ValidatingAdmissionPolicy
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p, err := vap.Get(t.Context(), RingPolicyName(ring), metav1.GetOptions{})
		if err != nil {
			return err
		}
		p.Spec.MatchConditions = append(p.Spec.MatchConditions, admissionv1.MatchCondition{Name: "unblock-sync", Expression: "false"})
		edited, err = vap.Update(t.Context(), p, metav1.UpdateOptions{FieldManager: "kubectl-edit"})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	electedAtEdit := next.Elector().Holding()
	controlplanetest.Eventually(t, time.Minute, "the standby is elected", next.Elector().Holding)
	user := adv11UserClient(cfg).CoreV1().ConfigMaps(ns)
	probe := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "guard-probe", Labels: map[string]string{AssignmentLabel(ring.Name): "someone"}}}
	refused := false
	var last, getErr error
	var got *admissionv1.ValidatingAdmissionPolicy
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline) && !refused; time.Sleep(time.Second) {
		if got, getErr = vap.Get(t.Context(), RingPolicyName(ring), metav1.GetOptions{}); getErr != nil || got.Generation == edited.Generation ||
			slices.ContainsFunc(got.Spec.MatchConditions, func(c admissionv1.MatchCondition) bool { return c.Name == "unblock-sync" }) {
			continue
		}
		_, last = user.Create(t.Context(), probe.DeepCopy(), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		refused = adv11RefusedByGuard(last, ring)
	}
	if !refused {
		var conds []admissionv1.MatchCondition
		if got != nil {
			conds = got.Spec.MatchConditions
		}
		t.Errorf("two minutes after the ring guard's policy was edited between two sharders' terms (the next one elected at the edit: %v), the next sharder has not applied it again (match conditions %+v, get: %v) or a user's create carrying the ring's label is admitted (err %v)",
			electedAtEdit, conds, getErr, last)
	}
	t.Logf("the next sharder was elected at the edit: %v", electedAtEdit)
}
