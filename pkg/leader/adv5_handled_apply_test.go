package leader_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// TestAdv5StalledCreateOnlyApplyOfAHandledObjectNeverLandsAfterTheTerm:
// pkg/apply's create-only apply (resourceVersion 18446744073709551615) is
// stamped, the docs say, but stampOf stamps it only when no pass of the
// term handles the object ("apply && createOnly && !handled"). A handler
// given an object that was deleted (nil) recreates it by a create-only
// apply: the object is handled, the apply carries no stamp, and it is
// not conditional either (it carries a resourceVersion of its own, which
// the API server ignores on a create). Held in the network past the
// term, it lands after it, while the same apply of an object no pass
// handles, held beside it, is refused.
func TestAdv5StalledCreateOnlyApplyOfAHandledObjectNeverLandsAfterTheTerm(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	installTermPolicy(t, ns, "lease")
	e := newElector(t, ns, "a")
	cfg, s := stalledOn(cp.Config(), "/configmaps/free-child", "/configmaps/handled-child")
	k := kubernetes.NewForConfigOrDie(e.Fence(cfg)).CoreV1().ConfigMaps(ns)
	var term string
	inTerm(t, e, func(ctx context.Context) {
		term = currentTerm(t, ns)
		waitAdmitted(t, ctx, ns, term)
		done := e.PassTracker().Handling(controller.ObjectRef{Resource: "configmaps", Namespace: ns, Name: "handled-child"}, "")
		defer done()
		for _, name := range []string{"free-child", "handled-child"} {
			body, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{
				"name": name, "namespace": ns, "resourceVersion": "18446744073709551615"}, "data": map[string]any{"a": "b"}})
			if err != nil {
				t.Fatal(err)
			}
			force := true
			_, err = k.Patch(ctx, name, types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: "operator", Force: &force})
			if err == nil || !strings.Contains(err.Error(), "adv5: connection stalled") {
				t.Fatalf("create-only apply of %s: %v, want held by the stalled connection", name, err)
			}
		}
	})
	eventually(t, "the ended term refused", func() bool { return dryRunStamped(t.Context(), ns, term) != nil })
	codes, answers := s.deliver(t)
	if len(codes) != 2 {
		t.Fatalf("%d applies held, want 2", len(codes))
	}
	if codes[0] != 403 || !strings.Contains(answers[0], "term-fence.lariat.dev") {
		t.Fatalf("the create-only apply of an unhandled object delivered after the term: %d %s, want refused by the term policy (the test's premise)", codes[0], answers[0])
	}
	if codes[1] < 400 {
		got, _ := controlplanetest.Clientset(cp.Config()).CoreV1().ConfigMaps(ns).Get(t.Context(), "handled-child", metav1.GetOptions{})
		t.Errorf("the create-only apply of a handled object sent in term %s landed after the term was over (%d), stamped %q: "+
			"want refused like the unhandled one (403 %.120s)", term, codes[1], got.GetLabels()[leader.TermIDLabel], answers[0])
	}
}
