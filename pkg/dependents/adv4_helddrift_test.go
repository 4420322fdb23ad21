package dependents_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/internal/dependentstest"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
)

// TestAdv4HeldObjectEditedByHandIsRevertedToTheRestartSnapshot: with
// Options.RepairDrift, WebApp a is held after a restart (its handler
// fails). A user then edits a's ConfigMap by hand (a plain Update, as
// kubectl edit does). held.go promises a held object is "never deleted
// nor changed" and that its value only holds it "as it is"; nobody asked
// for the value the restart read (the handler does not answer). Yet the
// edit is taken as drift and "repaired": the user's value is overwritten
// with the snapshot read at the restart, the field taken back. The sync
// point: c's ConfigMap, deleted by hand after the edit (same watch, so
// its event comes after the edit's), is repaired after a's repair ran.
func TestAdv4HeldObjectEditedByHandIsRevertedToTheRestartSnapshot(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	var failing atomic.Bool
	handler := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		switch {
		case app.Namespace != ns:
			return nil, nil
		case app.Name == "a" && failing.Load():
			return nil, errors.New("cannot compute a")
		}
		return []*dependents.Object{dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: app.Name + "-cm"},
			Data: map[string]string{"image": app.Spec.Image}})}, nil
	}
	fm := "adv4-helddrift"
	ctx, stop := context.WithCancel(t.Context())
	d, webapps := advStart(t, ctx, fm, heldKinds, handler)
	advCreateApp(t, webapps, ns, "a", map[string]string{})
	advCreateApp(t, webapps, ns, "c", map[string]string{})
	controlplanetest.Eventually(t, wait, "a's and c's ConfigMaps", func() bool {
		return advConfigMap(t, ns, "a-cm") != nil && advConfigMap(t, ns, "c-cm") != nil
	})
	stop()
	waitCtx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	if err := d.Wait(waitCtx); err != nil {
		t.Fatal(err)
	}
	failing.Store(true)
	opts := dependents.Options{FieldManager: fm, Kinds: heldKinds, Logger: controlplanetest.QuietLogger(), RepairDrift: true}
	_, webapps = dependentstest.Start(t, t.Context(), cp.Config(), nil, fm, handler, opts)
	controlplanetest.Eventually(t, wait, "a's condition: held", func() bool {
		return strings.Contains(readyMessage(t, webapps, ns, "a"), "held as they are")
	})
	cms := controlplanetest.Clientset(cp.Config()).CoreV1().ConfigMaps(ns)
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cm, err := cms.Get(t.Context(), "a-cm", metav1.GetOptions{})
		if err != nil {
			return err
		}
		cm.Data["image"] = "by-hand"
		_, err = cms.Update(t.Context(), cm, metav1.UpdateOptions{FieldManager: "kubectl-edit"})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	old := advConfigMap(t, ns, "c-cm")
	if err := cms.Delete(t.Context(), "c-cm", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, wait, "c's ConfigMap repaired", func() bool {
		now := advConfigMap(t, ns, "c-cm")
		return now != nil && now.UID != old.UID
	})
	cm := advConfigMap(t, ns, "a-cm")
	if cm == nil {
		t.Fatalf("a is held, yet its ConfigMap, edited by hand, was deleted")
	}
	if got := cm.Data["image"]; got != "by-hand" {
		t.Errorf("a is held, yet its ConfigMap's data.image, edited by hand to %q, is now %q", "by-hand", got)
	}
}
