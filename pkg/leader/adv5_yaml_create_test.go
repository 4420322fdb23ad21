package leader_test

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestAdv5StalledYAMLCreateNeverLandsAfterTheTerm: a create is a POST to
// a collection, whatever its body's media type, and the API server takes
// YAML bodies for every kind. A create sent through the fence in a term,
// with a YAML body (a rest client's Body([]byte) with Content-Type
// application/yaml, as a tool that forwards manifests sends it), that
// sits in the network until the term is over must be refused when it
// arrives, as the same create with a JSON body is. The fence stamped only
// JSON and protobuf bodies (termstamp_body.go said: "others (CBOR, YAML) go as
// they are, and are not fenced by the policy"), so the YAML create goes
// out unstamped, the policy never sees it, and it lands after the term.
func TestAdv5StalledYAMLCreateNeverLandsAfterTheTerm(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	installTermPolicy(t, ns, "lease")
	e := newElector(t, ns, "a")
	cfg, s := stalled(cp.Config())
	k := kubernetes.NewForConfigOrDie(e.Fence(cfg))
	bodies := map[string]string{
		"application/json": `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"json-child"},"data":{"a":"b"}}`,
		"application/yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: yaml-child\ndata:\n  a: b\n",
	}
	order := []string{"application/json", "application/yaml"}
	var term string
	inTerm(t, e, func(ctx context.Context) {
		term = currentTerm(t, ns)
		waitAdmitted(t, ctx, ns, term)
		for _, ct := range order {
			err := k.CoreV1().RESTClient().Post().Namespace(ns).Resource("configmaps").
				SetHeader("Content-Type", ct).Body([]byte(bodies[ct])).Do(ctx).Error()
			if err == nil || !strings.Contains(err.Error(), "adv5: connection stalled") {
				t.Fatalf("create (%s): %v, want held by the stalled connection", ct, err)
			}
		}
	})
	// The term is over (the Lease released) and the API server knows it.
	eventually(t, "the ended term refused", func() bool { return dryRunStamped(t.Context(), ns, term) != nil })
	codes, answers := s.deliver(t)
	if len(codes) != len(order) {
		t.Fatalf("%d creates held, want %d", len(codes), len(order))
	}
	if codes[0] != 403 || !strings.Contains(answers[0], "term-fence.lariat.dev") {
		t.Fatalf("the JSON create delivered after the term: %d %s, want refused by the term policy (the test's premise)", codes[0], answers[0])
	}
	if codes[1] < 400 {
		got, _ := controlplanetest.Clientset(cp.Config()).CoreV1().ConfigMaps(ns).Get(t.Context(), "yaml-child", metav1.GetOptions{})
		t.Errorf("the YAML create sent in term %s landed after the term was over (%d), labels %v: want refused like the JSON one (403 %.200s)",
			term, codes[1], got.GetLabels(), answers[0])
	}
}
