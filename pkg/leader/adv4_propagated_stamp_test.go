package leader_test

import (
	"context"
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestAdv4LeadersApplyOfAChildWithItsParentsMetadataIsNotRefused: a
// handler that propagates its parent's labels and annotations to the
// children it creates (a common pattern) copies the term stamp the fence
// put on the parent when an earlier term created it. A child created by a
// POST is stamped again, but Lariat creates children by server-side apply
// (kubedescriptor, pkg/apply: a PATCH, not stamped), so the create
// carries the parent's stamp, and the API server refuses it once that term
// is over: the leader's own create of the child, in its current term, is
// refused, and in every later term too, for good.
func TestAdv4LeadersApplyOfAChildWithItsParentsMetadataIsNotRefused(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	installTermPolicy(t, ns, "lease")
	e := newElector(t, ns, "a")
	fenced := kubernetes.NewForConfigOrDie(e.Fence(cp.Config())).CoreV1().ConfigMaps(ns)
	inTerm(t, e, func(ctx context.Context) {
		waitAdmitted(t, ctx, ns, currentTerm(t, ns))
		if _, err := fenced.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "parent",
			Labels: map[string]string{"team": "a"}, Annotations: map[string]string{"owner": "team-a"}}}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("the parent's create: %v", err)
		}
	})
	inTerm(t, e, func(ctx context.Context) {
		waitAdmitted(t, ctx, ns, currentTerm(t, ns))
		parent, err := fenced.Get(ctx, "parent", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		child := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{
			"name": "child", "namespace": ns, "labels": parent.Labels, "annotations": parent.Annotations}}
		body, err := json.Marshal(child)
		if err != nil {
			t.Fatal(err)
		}
		force := true
		if _, err := fenced.Patch(ctx, "child", types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: "operator", Force: &force}); err != nil {
			t.Errorf("the leader's apply of a child carrying its parent's labels and annotations, in its current term: %v", err)
		}
	})
}
