package leader_test

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// TestAdv5ImpersonatedCreateNeverLandsAfterTheTerm: the fence learns the
// user its creates are sent as once per term (termuser.go) and stamps
// every create of the term with it, but a request names its sender in
// its own headers: a client that impersonates per request (an operator
// creating on behalf of a tenant, Impersonate-User set on the request,
// as Rancher and multi-tenancy operators do) sends creates of one fenced
// transport as several users. The operator's own create teaches the
// fence its username; the impersonated create after it is stamped with
// that username, not the tenant's, so the policy takes it for a copy
// sent by another user and admits it unjudged: held in the network past
// the term, it lands, while the operator's own create, held beside it,
// is refused.
func TestAdv5ImpersonatedCreateNeverLandsAfterTheTerm(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	installTermPolicy(t, ns, "lease")
	e := newElector(t, ns, "a")
	cfg, s := stalled(cp.Config())
	k := kubernetes.NewForConfigOrDie(e.Fence(cfg))
	cm := func(name string) []byte {
		b, err := runtime.Encode(scheme.Codecs.LegacyCodec(corev1.SchemeGroupVersion),
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"a": "b"}})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var term string
	inTerm(t, e, func(ctx context.Context) {
		term = currentTerm(t, ns)
		waitAdmitted(t, ctx, ns, term)
		own := k.CoreV1().RESTClient().Post().Namespace(ns).Resource("configmaps").
			SetHeader("Content-Type", "application/json").Body(cm("own-child")).Do(ctx).Error()
		tenant := k.CoreV1().RESTClient().Post().Namespace(ns).Resource("configmaps").
			SetHeader("Content-Type", "application/json").
			SetHeader("Impersonate-User", "tenant-alice").SetHeader("Impersonate-Group", "system:masters").
			Body(cm("tenant-child")).Do(ctx).Error()
		for what, err := range map[string]error{"own": own, "impersonated": tenant} {
			if err == nil || !strings.Contains(err.Error(), "adv5: connection stalled") {
				t.Fatalf("%s create: %v, want held by the stalled connection", what, err)
			}
		}
	})
	eventually(t, "the ended term refused", func() bool { return dryRunStamped(t.Context(), ns, term) != nil })
	codes, answers := s.deliver(t)
	if len(codes) != 2 {
		t.Fatalf("%d creates held, want 2", len(codes))
	}
	if codes[0] != 403 || !strings.Contains(answers[0], "term-fence.lariat.dev") {
		t.Fatalf("the operator's own create delivered after the term: %d %s, want refused by the term policy (the test's premise)", codes[0], answers[0])
	}
	if codes[1] < 400 {
		got, _ := controlplanetest.Clientset(cp.Config()).CoreV1().ConfigMaps(ns).Get(t.Context(), "tenant-child", metav1.GetOptions{})
		t.Errorf("the create sent in term %s as tenant-alice landed after the term was over (%d), stamped %s=%q: "+
			"want refused like the operator's own (403 %.120s)", term, codes[1], leader.TermUserLabel, got.GetLabels()[leader.TermUserLabel], answers[0])
	}
}
