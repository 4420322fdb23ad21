package dependents_test

import (
	"sync/atomic"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestAdv14ChangesWhileFirstResyncAbortsAreNotLost: the first resync after
// a restart aborts (the vouch list is refused), and the Update events that
// arrive meanwhile are answered "waiting for a resync". While it
// aborts: b's config changes, c's ConfigMap is deleted by hand, and owner d
// is deleted. Once the list passes, the committed resync must show all
// three: b's ConfigMap updated, c's recreated, d's deleted.
func TestAdv14ChangesWhileFirstResyncAbortsAreNotLost(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	fm := "adv14-before"
	var zReady, refuse atomic.Bool
	zReady.Store(true)
	handler := latchHandler(ns, "z", &zReady, func(app *demov1.WebApp) map[string]string {
		return map[string]string{"v": app.Spec.Config["v"]}
	})
	latchOwner(t, ns, fm, handler, "z", []string{"b", "c", "d"}, map[string]string{"v": "1"})

	zReady.Store(false)
	refuse.Store(true)
	d, webapps := restartRefusingVouch(t, ns, fm, handler, &refuse)
	kube := controlplanetest.Clientset(cp.Config())
	// The status writer may update b meanwhile: a conflict is retried.
	setConfig(t, webapps, ns, "b", "v", "2")
	if err := kube.CoreV1().ConfigMaps(ns).Delete(t.Context(), "c-cm", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := webapps.Delete(t.Context(), ns, "d", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// The events reach the loop while its first resync still aborts.
	controlplanetest.Eventually(t, wait, "a second failing resync after the changes", func() bool {
		return loopFailureCount(d, "vouches for readiness") >= 2
	})
	if committedResync(d) {
		t.Fatal("a resync committed while the vouch read was refused")
	}
	refuse.Store(false)
	controlplanetest.Eventually(t, wait, "a resync committed once the read passes", func() bool { return committedResync(d) })
	controlplanetest.Eventually(t, wait, "b's ConfigMap updated, c's recreated, d's deleted", func() bool {
		bcm, ccm, dcm := advConfigMap(t, ns, "b-cm"), advConfigMap(t, ns, "c-cm"), advConfigMap(t, ns, "d-cm")
		ok := bcm != nil && bcm.Data["v"] == "2" && ccm != nil && dcm == nil
		if !ok {
			t.Logf("b-cm %v, c-cm present %v, d-cm present %v; b's condition %q", bcm != nil && bcm.Data["v"] == "2",
				ccm != nil, dcm != nil, readyMessage(t, webapps, ns, "b"))
		}
		return ok
	})
}
