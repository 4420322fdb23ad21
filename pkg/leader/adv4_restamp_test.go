package leader_test

import (
	"context"
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// createStampedParent creates, through e's fence in a term of its own, a
// ConfigMap "parent" carrying labels and annotations of its own besides
// the stamp the fence puts on it, and returns it as read back after that
// term ended (the stamp is of an ended term).
func createStampedParent(t *testing.T, e *leader.Elector, ns string) *corev1.ConfigMap {
	t.Helper()
	fenced := kubernetes.NewForConfigOrDie(e.Fence(cp.Config())).CoreV1().ConfigMaps(ns)
	inTerm(t, e, func(ctx context.Context) {
		waitAdmitted(t, ctx, ns, currentTerm(t, ns))
		if _, err := fenced.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "parent",
			Labels: map[string]string{"team": "a"}, Annotations: map[string]string{"owner": "team-a"}}}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("the parent's create: %v", err)
		}
	})
	parent, err := controlplanetest.Clientset(cp.Config()).CoreV1().ConfigMaps(ns).Get(t.Context(), "parent", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return parent
}

// TestAdv4LeadersCreateByPutWithACopiedStampIsNotRefused: a handler that
// propagates its parent's labels and annotations to a child it creates by
// an update (a PUT of a missing object, which the API server turns into a
// create for kinds that allow it: Roles, Services, Leases, ...) copies the
// stamp of the term that created the parent. The API server judges that
// PUT as a create, and refuses it once that term is over: the leader's own
// create, in its current term, and in every later term. The fence must
// write its current term over a stamp a PUT carries, JSON and protobuf.
func TestAdv4LeadersCreateByPutWithACopiedStampIsNotRefused(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	installTermPolicy(t, ns, "lease")
	e := newElector(t, ns, "a")
	parent := createStampedParent(t, e, ns)
	inTerm(t, e, func(ctx context.Context) {
		term := currentTerm(t, ns)
		waitAdmitted(t, ctx, ns, term)
		for wire, contentType := range map[string]string{"json": "application/json", "protobuf": "application/vnd.kubernetes.protobuf"} {
			cfg := rest.CopyConfig(cp.Config())
			cfg.ContentType = contentType
			roles := kubernetes.NewForConfigOrDie(e.Fence(cfg)).RbacV1().Roles(ns)
			child := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "child-" + wire, Namespace: ns,
				Labels: parent.Labels, Annotations: parent.Annotations}}
			got, err := roles.Update(ctx, child, metav1.UpdateOptions{})
			if err != nil {
				t.Errorf("%s: the leader's create by PUT of a child carrying its parent's metadata, in its current term: %.400v", wire, err)
				continue
			}
			if got.Labels[leader.TermIDLabel] != termID(term) || got.Labels["team"] != "a" || got.Annotations["owner"] != "team-a" {
				t.Errorf("%s: the child was created with labels %v and annotations %v; want the current term %q and the parent's own", wire, got.Labels, got.Annotations, term)
			}
		}
	})
}

// TestAdv4LeadersApplyOfAHandledObjectWithACopiedStampIsNotRefused: a
// handler of the child's own kind, given a child that was deleted (nil),
// recreates it by an apply carrying its parent's labels and annotations.
// The fence lets an apply of an object a handler of the term is handling
// go as it is (it only adds the pass's precondition), so the apply carries
// the parent's stamp of an ended term and the API server refuses it as a
// stale create, in this term and every later one.
func TestAdv4LeadersApplyOfAHandledObjectWithACopiedStampIsNotRefused(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	installTermPolicy(t, ns, "lease")
	e := newElector(t, ns, "a")
	parent := createStampedParent(t, e, ns)
	fenced := kubernetes.NewForConfigOrDie(e.Fence(cp.Config())).CoreV1().ConfigMaps(ns)
	inTerm(t, e, func(ctx context.Context) {
		term := currentTerm(t, ns)
		waitAdmitted(t, ctx, ns, term)
		// The handler of the child was given nil: no version.
		done := e.PassTracker().Handling(controller.ObjectRef{Resource: "configmaps", Namespace: ns, Name: "child"}, "")
		defer done()
		body, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{
			"name": "child", "namespace": ns, "labels": parent.Labels, "annotations": parent.Annotations}})
		if err != nil {
			t.Fatal(err)
		}
		force := true
		got, err := fenced.Patch(ctx, "child", types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: "operator", Force: &force})
		if err != nil {
			t.Fatalf("the leader's apply of a handled child carrying its parent's metadata, in its current term: %.400v", err)
		}
		if got.Labels[leader.TermIDLabel] != termID(term) || got.Labels["team"] != "a" {
			t.Errorf("the child was created with labels %v; want the current term %q and the parent's own", got.Labels, term)
		}
	})
}
