package leader_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// groupCreate dry-runs the create of a ConfigMap stamped as the group
// "members-" of ns stamps its creates, in term id.
func groupCreate(ctx context.Context, ns, id string) error {
	_, err := controlplanetest.Clientset(cp.Config()).CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		GenerateName: "group-",
		Labels:       map[string]string{leader.TermLeaseLabel: leader.TermGroupLabelValue(ns, "members-"), leader.TermIDLabel: id},
	}}, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	return err
}

// groupTerm runs one term (RunTerm) of the group "members-" Lease
// ns/name and returns its term ID and a func that ends it (releasing the
// Lease) and returns once it did.
func groupTerm(t *testing.T, ns, name string) (string, func()) {
	t.Helper()
	leaseCfg := rest.CopyConfig(cp.Config())
	leaseCfg.Timeout = renewDeadline
	e, err := leader.New(kubernetes.NewForConfigOrDie(leaseCfg).CoordinationV1(), ns, name,
		leader.WithIdentity(name), leader.WithLeaseDuration(leaseDuration), leader.WithRenewDeadline(renewDeadline),
		leader.WithRetryPeriod(retryPeriod), leader.WithLogger(controlplanetest.QuietLogger()), leader.WithTermGroup("members-"))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Run(t.Context(), func(context.Context) error { return nil }); err == nil {
		t.Fatal("Run of a term group's Lease: nil; want an error (a group's Lease holds one term)")
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = e.RunTerm(ctx, func(work context.Context) error { <-work.Done(); return nil })
	}()
	eventually(t, name+" holding its Lease", e.Holding)
	l, err := controlplanetest.Clientset(cp.Config()).CoordinationV1().Leases(ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if l.Labels[leader.TermGroupLabel] != leader.TermGroupLabelValue(ns, "members-") {
		t.Fatalf("the group's Lease %s is labelled %v; want %s=%s", name, l.Labels, leader.TermGroupLabel, leader.TermGroupLabelValue(ns, "members-"))
	}
	stop := func() { cancel(); <-done }
	t.Cleanup(stop)
	return l.Labels[leader.TermIDLabel], stop
}

// TestTermGroupJudgesEachCreateByItsOwnLease: one binding judges the
// creates of every Lease of a term group (Leases of one term each, such as
// pkg/shard's members), each by the Lease in its term: with no Lease of
// the group, every stamped create is refused; a live Lease's term passes
// while another Lease of the group is live too (each Lease admits the
// terms it is not in); a released Lease's term is refused, and so is the
// term of a Lease labelled ended (TermEndedLabel) while it still names its
// holder; an unstamped create passes. CheckTermGroupPolicy finds the
// fence installed and enforced.
func TestTermGroupJudgesEachCreateByItsOwnLease(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	kube := controlplanetest.Clientset(cp.Config())
	adm := kube.AdmissionregistrationV1()
	if err := leader.CheckTermGroupPolicy(t.Context(), adm, ns, "members-"); err == nil {
		t.Fatal("CheckTermGroupPolicy before the binding: nil")
	}
	if err := leader.InstallTermGroupPolicy(t.Context(), adm, ns, "members-"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a stamped create refused while the group has no Lease", func() bool {
		return leader.IsTermRefused(groupCreate(t.Context(), ns, "0123456789abcdef"))
	})
	if err := leader.CheckTermGroupPolicy(t.Context(), adm, ns, "members-"); err != nil {
		t.Fatalf("CheckTermGroupPolicy once installed, no Lease yet: %v", err)
	}

	a, stopA := groupTerm(t, ns, "members-a")
	b, _ := groupTerm(t, ns, "members-b")
	eventually(t, "a's and b's terms admitted", func() bool {
		return groupCreate(t.Context(), ns, a) == nil && groupCreate(t.Context(), ns, b) == nil
	})
	if err := leader.CheckTermGroupPolicy(t.Context(), adm, ns, "members-"); err != nil {
		t.Fatalf("CheckTermGroupPolicy with two Leases: %v", err)
	}

	stopA() // released: no holder
	eventually(t, "a's term refused once its Lease is released", func() bool { return leader.IsTermRefused(groupCreate(t.Context(), ns, a)) })
	if err := groupCreate(t.Context(), ns, b); err != nil {
		t.Fatalf("b's term, live, after a's release: %v", err)
	}

	// The sharder ends an expired member Lease that still names its
	// holder: b's Lease, held, labelled ended.
	leases := kube.CoordinationV1().Leases(ns)
	eventually(t, "b's Lease labelled ended", func() bool { // (b renews it meanwhile: a conflict is tried again)
		l, err := leases.Get(t.Context(), "members-b", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		l.Labels[leader.TermEndedLabel] = b
		_, err = leases.Update(t.Context(), l, metav1.UpdateOptions{})
		return err == nil
	})
	eventually(t, "b's term refused once its Lease is ended", func() bool { return leader.IsTermRefused(groupCreate(t.Context(), ns, b)) })

	if _, err := kube.CoreV1().ConfigMaps(ns).Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "unstamped"}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("an unstamped create: %v", err)
	}
}
