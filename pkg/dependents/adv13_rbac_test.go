package dependents_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/internal/dependentstest"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
)

var adv13CMKind = []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap")}

// TestAdv13DeleteForbiddenIsNamedInTheCondition: the registration may not
// delete ConfigMaps. WebApp a's ConfigMap is renamed from x to y: y is
// created, x cannot be deleted. x stays (right: nothing is lost), and a's
// condition must say so, naming x and the refusal, rather than Ready.
// It fails: a's condition stays True "ready: ConfigMap y" for ever, and
// nothing is logged at warning level: the user never learns that x,
// wanted by nobody, lingers because delete is forbidden.
func TestAdv13DeleteForbiddenIsNamedInTheCondition(t *testing.T) {
	cfg := adv13User(t, adv13AllBut("get", "list", "watch", "create", "update", "patch"))
	_, webapps := dependentstest.Start(t, t.Context(), cfg, nil, "adv13-nodelete", advConfigMaps,
		dependents.Options{FieldManager: "adv13-nodelete", Kinds: adv13CMKind, Logger: adv13Logger(t)})
	ns := controlplanetest.Namespace(t, cp.Config())
	advCreateApp(t, webapps, ns, "a", map[string]string{"cm": "x"})
	controlplanetest.Eventually(t, wait, "a Ready with x", func() bool {
		return advConfigMap(t, ns, "x") != nil && adv13Ready(t, webapps, ns, "a")
	})
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		app, err := webapps.Get(t.Context(), ns, "a", metav1.GetOptions{})
		if err != nil {
			return err
		}
		app.Spec.Config["cm"] = "y"
		_, err = webapps.Update(t.Context(), app)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, wait, "y created", func() bool { return advConfigMap(t, ns, "y") != nil })
	var msg string
	deadline := time.Now().Add(wait)
	for {
		msg = readyMessage(t, webapps, ns, "a")
		if has(msg, "ConfigMap x") && (has(msg, "forbidden") || has(msg, "delete")) {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("a's condition does not name ConfigMap x, whose delete is forbidden: %q", msg)
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if advConfigMap(t, ns, "x") == nil {
		t.Fatal("x was deleted without the permission")
	}
}

// TestAdv13HeldOwnerWhoseGetIsForbiddenHoldsNoOtherOwnerBack: after a
// restart WebApp a's handler fails, so a's ConfigMaps are held, read by
// one GET each; the registration may list and watch ConfigMaps but get
// only b's (RBAC resourceNames). Nothing of a may be deleted or changed (the read failed), and
// WebApp b, created after the restart, must get its ConfigMaps: a resync
// that cannot compute one owner holds no other owner back.
// It fails: every resync aborts on a's forbidden GET, for good (a 403 does
// not heal), so b stays "pending: ConfigMap b-first: not ready: not
// created yet" and a's condition says only "failed: handler: ... cannot
// compute a", nothing of the forbidden read.
func TestAdv13HeldOwnerWhoseGetIsForbiddenHoldsNoOtherOwnerBack(t *testing.T) {
	// get only of b's ConfigMaps: the registration needs it to apply them.
	rules := append(adv13AllBut("list", "watch", "create", "update", "patch", "delete"), rbacv1.PolicyRule{
		APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"},
		ResourceNames: []string{"b-first", "b-second"}})
	cfg := adv13User(t, rules)
	var failing atomic.Bool
	failing.Store(true)
	_, webapps, ns, before := heldRestart(t, "adv13-noget", cfg, &failing)
	advCreateApp(t, webapps, ns, "b", map[string]string{"cm": "b"})
	deadline := time.Now().Add(wait)
	for advConfigMap(t, ns, "b-first") == nil || advConfigMap(t, ns, "b-second") == nil {
		if time.Now().After(deadline) {
			t.Errorf("b's ConfigMaps not created while a's held objects cannot be read (forbidden get); b says %q, a says %q",
				readyMessage(t, webapps, ns, "b"), readyMessage(t, webapps, ns, "a"))
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	sameObject(t, "forbidden get", before[0], advConfigMap(t, ns, "a-first"))
	sameObject(t, "forbidden get", before[1], advConfigMap(t, ns, "a-second"))
}

// TestAdv13RestartWithoutListingTheKindDeletesNothing: WebApps a and b
// have a ConfigMap each; the replica stops, b is deleted (its ConfigMap a
// leftover), and the replica starts again without list and watch on
// ConfigMaps. It deletes nothing, names the kind it cannot list, and once
// a binding allows listing deletes b's leftover only, a's ConfigMap the
// same object.
func TestAdv13RestartWithoutListingTheKindDeletesNothing(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	handler := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		if app.Namespace != ns {
			return nil, nil
		}
		return advConfigMaps(app)
	}
	ctx, stop := context.WithCancel(t.Context())
	d, webapps := advStart(t, ctx, "adv13-nolist", adv13CMKind, handler)
	advCreateApp(t, webapps, ns, "a", map[string]string{"cm": "a-cm"})
	advCreateApp(t, webapps, ns, "b", map[string]string{"cm": "b-cm"})
	controlplanetest.Eventually(t, wait, "a's and b's ConfigMaps", func() bool {
		return advConfigMap(t, ns, "a-cm") != nil && advConfigMap(t, ns, "b-cm") != nil
	})
	aCM := advConfigMap(t, ns, "a-cm")
	stop()
	waitCtx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	if err := d.Wait(waitCtx); err != nil {
		t.Fatal(err)
	}
	if err := webapps.Delete(t.Context(), ns, "b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	cfg := adv13User(t, adv13AllBut("get", "create", "update", "patch", "delete"))
	log := controlplanetest.QuietLogger()
	// The informers log to logrus's standard logger.
	std := logrus.StandardLogger()
	saved := std.ReplaceHooks(logrus.LevelHooks{})
	t.Cleanup(func() { std.ReplaceHooks(saved) })
	global := logtest.NewGlobal()
	// The factory's Start waits for every cache to sync: run it aside.
	f, webapps := dependentstest.Factory(t, cfg, nil)
	d, err := dependents.Register(t.Context(), f, webapps, webAppStatus(), "adv13-nolist", handler,
		dependents.Options{FieldManager: "adv13-nolist", Kinds: adv13CMKind, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan error, 1)
	go func() { started <- f.Start(t.Context(), 2) }()
	t.Cleanup(func() {
		waitCtx, cancel := context.WithTimeout(context.WithoutCancel(t.Context()), wait)
		defer cancel()
		_ = d.Wait(waitCtx)
	})
	controlplanetest.Eventually(t, wait, "the informers' log naming the forbidden list of ConfigMaps", func() bool {
		for _, e := range global.AllEntries() {
			if strings.Contains(fmt.Sprint(e.Data["error"]), `cannot list resource "configmaps"`) ||
				strings.Contains(fmt.Sprint(e.Data["error"]), `cannot watch resource "configmaps"`) {
				return true
			}
		}
		return false
	})
	if advConfigMap(t, ns, "b-cm") == nil || advConfigMap(t, ns, "a-cm") == nil {
		t.Fatal("a ConfigMap was deleted on a view that could not list ConfigMaps")
	}
	adv13Grant(t, cfg.Impersonate.UserName, "list", "watch")
	if err := <-started; err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, wait, "b's leftover deleted once listing is allowed", func() bool {
		return advConfigMap(t, ns, "b-cm") == nil
	})
	if now := advConfigMap(t, ns, "a-cm"); now == nil || now.UID != aCM.UID {
		t.Errorf("a's ConfigMap was deleted or created again: %v", now)
	}
}
