package leader_test

import (
	"context"
	"maps"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// TestAdv5UpdateOfAnObjectItDidNotCreateKeepsItsLabels: an update (a PUT
// of an object that exists) creates nothing, and the term policy never
// judges it, but the fence restamps every PUT whose body carries a stamp
// (stampOf: it "may create"). An object another operator's fence created
// (stamped with that operator's Lease, term and user), updated by this
// operator (a Get, a change of its data, an Update, as any client does),
// comes out with its labels rewritten: its term-lease, term-id and
// term-user now name this operator's Lease, term and user. The fence
// changed labels of an object it did not create, on a write that only
// meant to change its data.
func TestAdv5UpdateOfAnObjectItDidNotCreateKeepsItsLabels(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	installTermPolicy(t, ns, "lease")
	admin := controlplanetest.Clientset(cp.Config())
	// Made by another operator's fence, under its own Lease (no binding
	// here selects it: admitted as it is).
	other := map[string]string{
		leader.TermLeaseLabel: leader.TermLeaseLabelValue("other-operator", "its-lease"),
		leader.TermIDLabel:    "0123456789abcdef",
		leader.TermUserLabel:  "system.serviceaccount.other-operator.default",
		"app":                 "theirs",
	}
	_, err := admin.CoreV1().ConfigMaps(ns).Create(t.Context(), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "theirs", Labels: other}, Data: map[string]string{"a": "1"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e := newElector(t, ns, "a")
	k := kubernetes.NewForConfigOrDie(e.Fence(cp.Config()))
	inTerm(t, e, func(ctx context.Context) {
		waitAdmitted(t, ctx, ns, currentTerm(t, ns))
		cm, err := k.CoreV1().ConfigMaps(ns).Get(ctx, "theirs", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cm.Data["a"] = "2"
		if _, err := k.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("update through the fence: %v", err)
		}
	})
	got, err := admin.CoreV1().ConfigMaps(ns).Get(t.Context(), "theirs", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Data["a"] != "2" {
		t.Fatalf("data %v, want the update's", got.Data)
	}
	if !maps.Equal(got.Labels, other) {
		t.Errorf("an update of the data of an object another operator created changed its labels:\n got %v\nwant %v", got.Labels, other)
	}
}
