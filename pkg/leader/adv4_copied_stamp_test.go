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

// TestAdv4UsersCopyOfAnOperatorsObjectIsNotRefused: the stamp the fence
// puts on an object the leader creates stays on it, and the policy judges
// any create carrying it. A user who copies such an object, through no
// fence at all (`kubectl get -o yaml | kubectl create -f -` under another
// name, a backup restored after the object was lost: Velero keeps labels
// and annotations), creates an object with the term stamp of a term that
// is over, and the API server refuses it as a stale create of the
// operator. docs/replicas.md promises that everything created through an
// unfenced config is never evaluated; here a user's own create is refused,
// for good (no later term makes it pass), with a message about a term the
// user never had. (Fixed: the policy judges a stamped create only when
// its sender is the user the stamp names, the fence's own.)
func TestAdv4UsersCopyOfAnOperatorsObjectIsNotRefused(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	installTermPolicy(t, ns, "lease")
	e := newElector(t, ns, "a")
	var term string
	inTerm(t, e, func(ctx context.Context) {
		term = currentTerm(t, ns)
		waitAdmitted(t, ctx, ns, term)
		_, err := kubernetes.NewForConfigOrDie(e.Fence(cp.Config())).CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "made-by-the-operator", Labels: map[string]string{"app": "web"}},
			Data:       map[string]string{"k": "v"},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("the leader's create: %v", err)
		}
	})
	// The term is over (the lease released); once the API server has seen
	// that, the term's own stale creates are refused, as they should be.
	eventually(t, "the ended term refused", func() bool {
		err := dryRunStamped(t.Context(), ns, term)
		if err != nil && !leader.IsTermRefused(err) {
			t.Fatal(err)
		}
		return err != nil
	})

	// The user and the backup tool are identities of their own, as they
	// are in a cluster: another user, with every right.
	userCfg := rest.CopyConfig(cp.Config())
	userCfg.Impersonate = rest.ImpersonationConfig{UserName: "a-user", Groups: []string{"system:masters", "system:authenticated"}}
	admin := controlplanetest.Clientset(userCfg).CoreV1().ConfigMaps(ns)
	orig, err := admin.Get(t.Context(), "made-by-the-operator", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if orig.Labels[leader.TermUserLabel] == "" {
		t.Fatalf("the leader's create carries no %s: %v", leader.TermUserLabel, orig.Labels)
	}
	copyOf := func(name string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: orig.Labels, Annotations: orig.Annotations}, Data: orig.Data}
	}
	// The same copy sent as the operator (the identity the fence sent the
	// create as) is a stale create of the operator's, and stays refused.
	_, err = controlplanetest.Clientset(cp.Config()).CoreV1().ConfigMaps(ns).Create(t.Context(), copyOf("operators-copy"),
		metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if !leader.IsTermRefused(err) {
		t.Errorf("a create stamped with an ended term, sent as the operator, not refused: %v", err)
	}
	// A copy under another name, by a user.
	if _, err := admin.Create(t.Context(), copyOf("users-copy"), metav1.CreateOptions{}); err != nil {
		t.Errorf("a user's copy of an object the operator created, created through no fence, refused: %v", err)
	}
	// The object lost and restored from a backup, as it was.
	if err := admin.Delete(t.Context(), orig.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Create(t.Context(), copyOf(orig.Name), metav1.CreateOptions{}); err != nil {
		t.Errorf("a restore of an object the operator created, through no fence, refused: %v", err)
	}
}
