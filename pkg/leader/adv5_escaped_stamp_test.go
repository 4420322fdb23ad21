package leader_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// TestAdv5CopiedStampWithEscapedKeysIsRewritten: a PUT that may create
// and carries a stamp copied from another object is stamped with the
// current term in its place (docs/safety.md), but the fence looks for
// the stamp by the bytes "lariat.dev/term" before it decodes the body.
// JSON may write a key's '/' as "\/" (encoders of several languages do,
// by default): the body carries the same labels, the API server reads
// them so, but the fence finds no stamp and sends the copied one of an
// ended term. The leader's create by PUT of a child carrying its
// parent's labels is then refused in its own, current term.
func TestAdv5CopiedStampWithEscapedKeysIsRewritten(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	installTermPolicy(t, ns, "lease")
	e := newElector(t, ns, "a")
	parent := createStampedParent(t, e, ns)
	k := kubernetes.NewForConfigOrDie(e.Fence(cp.Config()))
	esc := func(key string) string { return strings.ReplaceAll(key, "/", `\/`) }
	body := fmt.Sprintf(`{"apiVersion":"rbac.authorization.k8s.io\/v1","kind":"Role","metadata":{"name":"child","namespace":%q,`+
		`"labels":{"team":"a",%q:%q,%q:%q,%q:%q}}}`, ns,
		esc(leader.TermLeaseLabel), parent.Labels[leader.TermLeaseLabel],
		esc(leader.TermIDLabel), parent.Labels[leader.TermIDLabel],
		esc(leader.TermUserLabel), parent.Labels[leader.TermUserLabel])
	body = strings.ReplaceAll(body, `\\/`, `\/`) // %q doubled the backslash
	inTerm(t, e, func(ctx context.Context) {
		term := currentTerm(t, ns)
		waitAdmitted(t, ctx, ns, term)
		err := k.RbacV1().RESTClient().Put().Namespace(ns).Resource("roles").Name("child").
			SetHeader("Content-Type", "application/json").Body([]byte(body)).Do(ctx).Error()
		if err != nil {
			t.Errorf("the leader's create by PUT of a child carrying its parent's labels (JSON-escaped keys), in its current term %s: %.400v", term, err)
		}
	})
}
