package leader_test

import (
	"context"
	"testing"

	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// TestAdv4CreatesOfTheCurrentTermInEveryShapePass: where the attack of
// issue 24 looked for false refusals and found none. Through the fence, in
// the current term, JSON and protobuf: cluster-scoped creates (a
// Namespace, whose parameter Lease lives in another namespace, and a
// ClusterRole), generateName creates (one object each), dry-run creates
// (stamped, nothing stored), TokenReview and SelfSubjectReview (stamped,
// admitted), Events, and a ServiceAccount token (a subresource, not
// stamped) all pass; and a cluster-scoped create stamped with a term that
// is over is refused (the policy covers cluster-scoped kinds).
func TestAdv4CreatesOfTheCurrentTermInEveryShapePass(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	installTermPolicy(t, ns, "lease")
	e := newElector(t, ns, "a")
	admin := controlplanetest.Clientset(cp.Config())
	var term string
	inTerm(t, e, func(ctx context.Context) {
		term = currentTerm(t, ns)
		waitAdmitted(t, ctx, ns, term)
		for _, wire := range []string{"application/json", "application/vnd.kubernetes.protobuf"} {
			cfg := e.Fence(cp.Config())
			cfg.ContentType = wire
			k := kubernetes.NewForConfigOrDie(cfg)
			check := func(what string, err error) {
				t.Helper()
				if err != nil {
					t.Errorf("%s (%s) through the fence, in the current term: %v", what, wire, err)
				}
			}
			n, err := k.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "adv4-shape-"}}, metav1.CreateOptions{})
			check("Namespace", err)
			if err == nil {
				if n.Labels[leader.TermIDLabel] != termID(term) {
					t.Errorf("Namespace (%s) stamped %q, want %q", wire, n.Labels[leader.TermIDLabel], term)
				}
				_ = admin.CoreV1().Namespaces().Delete(ctx, n.Name, metav1.DeleteOptions{})
			}
			cr, err := k.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{GenerateName: "adv4-shape-"}}, metav1.CreateOptions{})
			check("ClusterRole", err)
			if err == nil {
				_ = admin.RbacV1().ClusterRoles().Delete(ctx, cr.Name, metav1.DeleteOptions{})
			}
			_, err = k.AuthenticationV1().TokenReviews().Create(ctx, &authnv1.TokenReview{Spec: authnv1.TokenReviewSpec{Token: "not-a-token"}}, metav1.CreateOptions{})
			check("TokenReview", err)
			_, err = k.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authnv1.SelfSubjectReview{}, metav1.CreateOptions{})
			check("SelfSubjectReview", err)
			_, err = k.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "dry-"}},
				metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			check("dry-run ConfigMap", err)
			_, err = k.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "gen-"}}, metav1.CreateOptions{})
			check("generateName ConfigMap", err)
			_, err = k.CoreV1().Events(ns).Create(ctx, &corev1.Event{ObjectMeta: metav1.ObjectMeta{GenerateName: "ev-"},
				InvolvedObject: corev1.ObjectReference{Kind: "ConfigMap", Namespace: ns, Name: "x"}, Reason: "R", Message: "m"}, metav1.CreateOptions{})
			check("Event", err)
			sa, err := k.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{GenerateName: "sa-"}}, metav1.CreateOptions{})
			check("ServiceAccount", err)
			if err == nil {
				_, err = k.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa.Name, &authnv1.TokenRequest{}, metav1.CreateOptions{})
				check("ServiceAccount token", err)
			}
		}
	})
	cms, err := admin.CoreV1().ConfigMaps(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	gen := 0
	for _, cm := range cms.Items {
		if len(cm.Name) > 4 && cm.Name[:4] == "gen-" {
			gen++
		} else if len(cm.Name) > 4 && cm.Name[:4] == "dry-" {
			t.Errorf("a dry-run create stored %s", cm.Name)
		}
	}
	if gen != 2 {
		t.Errorf("%d generateName ConfigMaps, want 2 (one per create)", gen)
	}
	eventually(t, "the ended term refused", func() bool { return leader.IsTermRefused(dryRunStamped(t.Context(), ns, term)) })
	_, err = admin.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "adv4-stale-",
		Labels: map[string]string{leader.TermLeaseLabel: leader.TermLeaseLabelValue(ns, "lease"), leader.TermIDLabel: termID(term)}}}, metav1.CreateOptions{})
	if !leader.IsTermRefused(err) {
		t.Errorf("a Namespace create stamped with the ended term %s: %v, want refused by the term policy", term, err)
	}
}
