package leader_test

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestAdv6FenceKeepsWhatTheAPIServerReadsInADuplicateKey: the fence
// decodes a create's JSON body into maps and encodes it back, and a map
// keeps the last of two equal keys. The API server decodes a built-in
// kind into its typed struct, where a second "labels" adds to the map the
// first one filled (encoding/json reuses a map it decodes into), and
// admits it with a "duplicate field" warning. So a body the API server
// reads as labels {app, tier} goes out through the fence as {tier}: the
// created object silently lost a label (one a Service's selector, or the
// operator's own list, may match it by), the fence changed what it should
// have left alone. The same body sent unfenced keeps both (checked here,
// so the test shows the API server's reading, not an assumption of it).
func TestAdv6FenceKeepsWhatTheAPIServerReadsInADuplicateKey(t *testing.T) {
	advOpen(t, "a JSON create with a key written twice loses what the first one held through the fence")
	ns := controlplanetest.Namespace(t, cp.Config())
	installTermPolicy(t, ns, "lease")
	e := newElector(t, ns, "a")
	body := func(name string) []byte {
		return []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name + `",` +
			`"labels":{"app":"web"},"labels":{"tier":"front"}},"data":{"a":"b"}}`)
	}
	kube := controlplanetest.Clientset(cp.Config())
	if err := kube.CoreV1().RESTClient().Post().Namespace(ns).Resource("configmaps").
		SetHeader("Content-Type", "application/json").Body(body("unfenced")).Do(t.Context()).Error(); err != nil {
		t.Fatal(err)
	}
	k := kubernetes.NewForConfigOrDie(e.Fence(cp.Config()))
	inTerm(t, e, func(ctx context.Context) {
		waitAdmitted(t, ctx, ns, currentTerm(t, ns))
		if err := k.CoreV1().RESTClient().Post().Namespace(ns).Resource("configmaps").
			SetHeader("Content-Type", "application/json").Body(body("fenced")).Do(ctx).Error(); err != nil {
			t.Fatal(err)
		}
	})
	for _, name := range []string{"unfenced", "fenced"} {
		cm, err := kube.CoreV1().ConfigMaps(ns).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if cm.Labels["app"] != "web" || cm.Labels["tier"] != "front" {
			t.Errorf("the %s create's labels: %v, want app=web and tier=front, as the API server reads the body", name, cm.Labels)
		}
	}
}
