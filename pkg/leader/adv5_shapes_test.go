package leader_test

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// TestAdv5StalledCreatesInEveryStampedShapeAreRefused: where the attack
// of issue 24 looked for a stamped create that lands late and found
// none. Held past the term and delivered then: a protobuf create, a
// generateName create, a create carrying another Lease's and an old
// term's stamp (written over), and a cluster-scoped Namespace create,
// all through the fence, are refused.
func TestAdv5StalledCreatesInEveryStampedShapeAreRefused(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	installTermPolicy(t, ns, "lease")
	e := newElector(t, ns, "a")
	pb := rest.CopyConfig(cp.Config())
	pb.ContentType = "application/vnd.kubernetes.protobuf"
	pbCfg, pbStall := stalled(pb)
	jsonCfg, jsonStall := stalledOn(cp.Config(), "/configmaps", "/api/v1/namespaces")
	var term string
	inTerm(t, e, func(ctx context.Context) {
		term = currentTerm(t, ns)
		waitAdmitted(t, ctx, ns, term)
		held := func(what string, err error) {
			t.Helper()
			if err == nil || !strings.Contains(err.Error(), "adv5: connection stalled") {
				t.Fatalf("%s: %v, want held", what, err)
			}
		}
		copied := map[string]string{leader.TermLeaseLabel: "other.lease", leader.TermIDLabel: "0000000000000000", leader.TermUserLabel: "someone-else"}
		_, err := kubernetes.NewForConfigOrDie(e.Fence(pbCfg)).CoreV1().ConfigMaps(ns).Create(ctx,
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "pb", Labels: copied}}, metav1.CreateOptions{})
		held("protobuf create", err)
		k := kubernetes.NewForConfigOrDie(e.Fence(jsonCfg))
		_, err = k.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "gen-", Labels: copied}}, metav1.CreateOptions{})
		held("generateName create", err)
		_, err = k.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns + "-late"}}, metav1.CreateOptions{})
		held("Namespace create", err)
	})
	eventually(t, "the ended term refused", func() bool { return dryRunStamped(t.Context(), ns, term) != nil })
	delivered := 0
	for _, s := range []*stall{pbStall, jsonStall} {
		codes, answers := s.deliver(t)
		delivered += len(codes)
		for i := range codes {
			if codes[i] != 403 || !strings.Contains(answers[i], leader.TermPolicyName) {
				t.Errorf("a stalled create delivered after the term: %d %.300q, want refused by the term policy", codes[i], answers[i])
			}
		}
	}
	if delivered != 3 {
		t.Errorf("%d creates delivered, want 3", delivered)
	}
	_ = controlplanetest.Clientset(cp.Config()).CoreV1().Namespaces().Delete(context.Background(), ns+"-late", metav1.DeleteOptions{})
}
