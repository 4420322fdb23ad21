package leader_test

import (
	"context"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// TestAdv6CreateByPutWithVersionZeroIsRestamped: the fence reads a PUT
// that carries any resourceVersion as an update, which never creates, and
// leaves its labels, a copied stamp included, as they are (termstamp.go,
// stampOf: rv != ""). The API server reads resourceVersion "0" as none
// (its versioner parses it to 0: an unconditional update, and, for kinds
// that allow a create by update, a create of a missing object). So a
// leader's PUT of a missing Role carrying its parent's labels and
// resourceVersion "0" creates it, with the parent's stamp of an ended
// term: refused in the current term, and in every later one.
func TestAdv6CreateByPutWithVersionZeroIsRestamped(t *testing.T) {
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
				ResourceVersion: "0", Labels: parent.Labels}}
			got, err := roles.Update(ctx, child, metav1.UpdateOptions{})
			if err != nil {
				t.Errorf("%s: the leader's create by PUT (resourceVersion \"0\") of a child carrying its parent's labels, in its current term: %.400v", wire, err)
				continue
			}
			if got.Labels[leader.TermIDLabel] != termID(term) {
				t.Errorf("%s: the child was created with labels %v; want the current term %q", wire, got.Labels, term)
			}
		}
	})
}
