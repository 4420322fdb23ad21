package dependents_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
)

// TestAdv5RecreatedOwnerHeldAtTheRestartKeepsTheOldOwnersObjects:
// docs/safety.md promises that an object left by an owner deleted and
// created again under its name while no replica ran "is not inherited:
// it is not put, so the scheduler deletes it, and the new owner's own
// object is created". Here the new owner's handler fails at the restart:
// held.go holds the objects naming the owner's key "of any UID" under the
// new owner's UID, so the first resync keeps the old owner's ConfigMap
// (and the data its app gathered) as the new owner's, and the new
// owner's condition reports it as its own ("ready: ConfigMap a-data"),
// for as long as the handler fails: another owner that RequiresOwner a
// is met by it. (Once the handler answers, the object is deleted and the
// new owner's created: the hold only delays it, for ever if the handler
// never answers.)
func TestAdv5RecreatedOwnerHeldAtTheRestartKeepsTheOldOwnersObjects(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	var failing atomic.Bool
	handler := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		if app.Namespace == ns && failing.Load() {
			return nil, errors.New("cannot compute " + app.Name)
		}
		return advConfigMaps(app)
	}
	fm := "adv5-heldrecreated"
	cmKind := []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap")}
	ctx, stop := context.WithCancel(t.Context())
	d, webapps := advStart(t, ctx, fm, cmKind, handler)
	old := advCreateApp(t, webapps, ns, "a", map[string]string{"cm": "a-data"})
	controlplanetest.Eventually(t, wait, "the old owner's ConfigMap", func() bool { return advConfigMap(t, ns, "a-data") != nil })
	kube := controlplanetest.Clientset(cp.Config())
	cm := advConfigMap(t, ns, "a-data")
	cm.Data["gathered"] = "by the old owner's app"
	if _, err := kube.CoreV1().ConfigMaps(ns).Update(t.Context(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	stop()
	waitCtx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	if err := d.Wait(waitCtx); err != nil {
		t.Fatal(err)
	}
	if err := webapps.Delete(t.Context(), ns, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	fresh := advCreateApp(t, webapps, ns, "a", map[string]string{"cm": "a-data"})
	if fresh.UID == old.UID {
		t.Fatal("same UID")
	}
	failing.Store(true)
	d, webapps = advStart(t, t.Context(), fm, cmKind, handler)
	controlplanetest.Eventually(t, wait, "a resync committed", func() bool { return committedResync(d) })
	controlplanetest.Eventually(t, wait, "the new owner's condition after the restart", func() bool {
		return strings.Contains(readyMessage(t, webapps, ns, "a"), "cannot compute a")
	})
	if now := advConfigMap(t, ns, "a-data"); now != nil && now.UID == cm.UID {
		t.Errorf("the owner deleted while stopped (UID %s) kept its ConfigMap through the first resync (UID %s, "+
			"annotation %q, data %v): the new owner of the same name (UID %s) holds it as its own: %q", old.UID, now.UID,
			now.Annotations[dependents.AnnotationOwner], now.Data, fresh.UID, readyMessage(t, webapps, ns, "a"))
	}
}
