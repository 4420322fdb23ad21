package leader_test

import (
	"context"
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/leader"
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
//
// The fence now refuses such a body unsent (ErrUnstampable, strictjson.go)
// rather than imitate the API server's merge: nothing is created that the
// API server would not have read.
func TestAdv6FenceKeepsWhatTheAPIServerReadsInADuplicateKey(t *testing.T) {
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
		err := k.CoreV1().RESTClient().Post().Namespace(ns).Resource("configmaps").
			SetHeader("Content-Type", "application/json").Body(body("fenced")).Do(ctx).Error()
		if !errors.Is(err, leader.ErrUnstampable) {
			t.Errorf("the fenced create of a body that writes \"labels\" twice: %v; want it refused unsent (ErrUnstampable), never sent with what the API server would not have read", err)
		}
	})
	cm, err := kube.CoreV1().ConfigMaps(ns).Get(t.Context(), "unfenced", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cm.Labels["app"] != "web" || cm.Labels["tier"] != "front" {
		t.Errorf("the unfenced create's labels: %v, want app=web and tier=front, as the API server reads the body", cm.Labels)
	}
	if _, err := kube.CoreV1().ConfigMaps(ns).Get(t.Context(), "fenced", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the fenced create's object: %v; want none (the create was refused unsent)", err)
	}
}
