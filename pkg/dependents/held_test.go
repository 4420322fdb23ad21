package dependents_test

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	democtl "github.com/lariat-dev/lariat/generated/controllers/demo.lariat.dev/v1"
	"github.com/lariat-dev/lariat/internal/dependentstest"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// Held owners (held.go): after a restart, an owner whose handler fails and
// whose objects exist is held, its objects put as they are, and the
// resync goes through for every other owner.

var heldKinds = []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap")}

// heldPair returns two ConfigMaps of app, "<cm>-first" and "<cm>-second"
// ordered after it, whose data carry the app's image.
func heldPair(app *demov1.WebApp) ([]*dependents.Object, error) {
	first := dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: app.Spec.Config["cm"] + "-first"},
		Data: map[string]string{"image": app.Spec.Image}})
	second := dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: app.Spec.Config["cm"] + "-second"},
		Data: map[string]string{"image": app.Spec.Image}}).After(first)
	return []*dependents.Object{first, second}, nil
}

// heldRestart runs heldPair for WebApp a (ConfigMaps a-first, a-second),
// has another field manager add a label and a data entry to a-first, and
// restarts the registration on cfg with a handler that fails for a while
// failing is set. It returns the restarted registration, the WebApps'
// controller, the namespace and a-first and a-second as they were before
// the restart.
func heldRestart(t *testing.T, fm string, cfg *rest.Config, failing *atomic.Bool) (*dependents.Dependents, democtl.WebAppController, string, [2]*corev1.ConfigMap) {
	t.Helper()
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	ns := controlplanetest.Namespace(t, cp.Config())
	// Only this test's WebApps: the registration sees every namespace's.
	pair := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		if app.Namespace != ns {
			return nil, nil
		}
		return heldPair(app)
	}
	d, webapps := advStart(t, ctx, fm, heldKinds, pair)
	advCreateApp(t, webapps, ns, "a", map[string]string{"cm": "a"})
	controlplanetest.Eventually(t, wait, "a's ConfigMaps", func() bool {
		return advConfigMap(t, ns, "a-first") != nil && advConfigMap(t, ns, "a-second") != nil
	})
	theirs := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a-first","labels":{"theirs":"x"}},"data":{"extra":"theirs"}}`
	if _, err := controlplanetest.Clientset(cp.Config()).CoreV1().ConfigMaps(ns).Patch(t.Context(), "a-first",
		types.ApplyPatchType, []byte(theirs), metav1.PatchOptions{FieldManager: "another-manager"}); err != nil {
		t.Fatal(err)
	}
	before := [2]*corev1.ConfigMap{advConfigMap(t, ns, "a-first"), advConfigMap(t, ns, "a-second")}
	stop()
	waitCtx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	if err := d.Wait(waitCtx); err != nil {
		t.Fatal(err)
	}
	handler := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		if app.Namespace == ns && app.Name == "a" && failing.Load() {
			return nil, errors.New("cannot compute a")
		}
		return pair(app)
	}
	opts := dependents.Options{FieldManager: fm, Kinds: heldKinds, Logger: controlplanetest.QuietLogger()}
	d, webapps = dependentstest.Start(t, t.Context(), cfg, nil, fm, handler, opts)
	return d, webapps, ns, before
}

// committedResync tells whether a resync of d's loop went through: no
// handler failed, and its transaction was committed.
func committedResync(d *dependents.Dependents) bool {
	for _, r := range d.Loop().History().Records() {
		failed := false
		for _, h := range r.Handlers {
			failed = failed || h.Error != nil
		}
		if r.Method.IsResync() && r.Txn != nil && !failed {
			return true
		}
	}
	return false
}

// sameObject fails t when now differs from before: another object, or
// any change of its labels, annotations, data or resourceVersion.
func sameObject(t *testing.T, what string, before, now *corev1.ConfigMap) {
	t.Helper()
	switch {
	case now == nil:
		t.Errorf("%s: ConfigMap %s was deleted", what, before.Name)
	case now.UID != before.UID:
		t.Errorf("%s: ConfigMap %s was created again (UID %s, was %s)", what, before.Name, now.UID, before.UID)
	case now.ResourceVersion != before.ResourceVersion || !reflect.DeepEqual(now.Data, before.Data) ||
		!reflect.DeepEqual(now.Labels, before.Labels) || !reflect.DeepEqual(now.Annotations, before.Annotations):
		t.Errorf("%s: ConfigMap %s changed:\nbefore: rv %s %v %v %v\nnow:    rv %s %v %v %v", what, before.Name,
			before.ResourceVersion, before.Labels, before.Annotations, before.Data, now.ResourceVersion, now.Labels, now.Annotations, now.Data)
	}
}

// TestHeldOwnerKeepsItsObjectsAsTheyAre: after a restart, WebApp a's
// handler fails; its ConfigMaps exist. The first resync goes through (WebApp
// c, created afterwards, gets its ConfigMaps), a's objects are unchanged,
// the fields another manager set on them included, and a's condition says
// they are held. Once its handler succeeds again, a change of a replaces
// the held values: its ConfigMaps are updated, the other manager's fields
// stay.
func TestHeldOwnerKeepsItsObjectsAsTheyAre(t *testing.T) {
	var failing atomic.Bool
	failing.Store(true)
	d, webapps, ns, before := heldRestart(t, "held-keep", cp.Config(), &failing)
	controlplanetest.Eventually(t, wait, "a resync committed", func() bool { return committedResync(d) })
	advCreateApp(t, webapps, ns, "c", map[string]string{"cm": "c"})
	controlplanetest.Eventually(t, wait, "c's ConfigMaps", func() bool {
		return advConfigMap(t, ns, "c-first") != nil && advConfigMap(t, ns, "c-second") != nil
	})
	want := "handler: owner " + ns + "/a: cannot compute a; its 2 objects are held as they are"
	controlplanetest.Eventually(t, wait, "a's condition: held", func() bool {
		return strings.Contains(readyMessage(t, webapps, ns, "a"), want)
	})
	if msg := readyMessage(t, webapps, ns, "a"); !has(msg, "ready: ConfigMap a-first, ConfigMap a-second") {
		t.Errorf("a's condition %q does not say its held objects are ready", msg)
	}
	sameObject(t, "held", before[0], advConfigMap(t, ns, "a-first"))
	sameObject(t, "held", before[1], advConfigMap(t, ns, "a-second"))

	failing.Store(false)
	updateImage(t, webapps, ns, "a", "app:2")
	controlplanetest.Eventually(t, wait, "a's ConfigMaps at app:2, and its condition", func() bool {
		f, s := advConfigMap(t, ns, "a-first"), advConfigMap(t, ns, "a-second")
		msg := readyMessage(t, webapps, ns, "a")
		return f != nil && s != nil && f.Data["image"] == "app:2" && s.Data["image"] == "app:2" &&
			!has(msg, "held") && !has(msg, "failed") && has(msg, "ConfigMap a-first")
	})
	now := advConfigMap(t, ns, "a-first")
	if now.UID != before[0].UID || now.Data["extra"] != "theirs" || now.Labels["theirs"] != "x" {
		t.Errorf("a-first after a's recovery: UID %s (was %s), data %v, labels %v: another manager's fields lost",
			now.UID, before[0].UID, now.Data, now.Labels)
	}
}

// TestHeldOwnerDeletedHasItsObjectsDeletedInReverseOrder: a held owner
// deleted has its objects deleted, a-second (ordered after a-first)
// before a-first.
func TestHeldOwnerDeletedHasItsObjectsDeletedInReverseOrder(t *testing.T) {
	var failing atomic.Bool
	failing.Store(true)
	d, webapps, ns, _ := heldRestart(t, "held-delete", cp.Config(), &failing)
	controlplanetest.Eventually(t, wait, "a's condition: held", func() bool {
		return has(readyMessage(t, webapps, ns, "a"), "held as they are")
	})
	if err := webapps.Delete(t.Context(), ns, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, wait, "a's ConfigMaps deleted", func() bool {
		return advConfigMap(t, ns, "a-first") == nil && advConfigMap(t, ns, "a-second") == nil
	})
	dependentstest.Recorded(t, d, kvscheduler.OpDelete, "ConfigMap a-first")
	if deletes := ops(d, kvscheduler.OpDelete); !before(deletes, "ConfigMap a-second", "ConfigMap a-first") {
		t.Errorf("deletes %v: want ConfigMap a-second before ConfigMap a-first", deletes)
	}
}

// TestFailedGetOfAHeldObjectAbortsTheFirstResync: the read of a held
// object fails; the first resync is aborted as before (nothing committed,
// nothing read as "no object"), and the ConfigMaps stay as they are. Once
// the reads succeed, a healing resync holds them.
func TestFailedGetOfAHeldObjectAbortsTheFirstResync(t *testing.T) {
	var failing, refuse atomic.Bool
	failing.Store(true)
	refuse.Store(true)
	cfg := rest.CopyConfig(cp.Config())
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			if refuse.Load() && req.Method == http.MethodGet && strings.HasSuffix(req.URL.Path, "/configmaps/a-first") {
				return nil, errors.New("refused by the test")
			}
			return next.RoundTrip(req)
		})
	})
	d, webapps, ns, before := heldRestart(t, "held-get", cfg, &failing)
	controlplanetest.Eventually(t, wait, "the first resync, failed", func() bool {
		for _, r := range d.Loop().History().Records() {
			for _, h := range r.Handlers {
				if r.Method.IsResync() && h.Error != nil && has(h.Error.Error(), "cannot hold") {
					return true
				}
			}
		}
		return false
	})
	for _, r := range d.Loop().History().Records() {
		if r.Method.IsResync() && r.Txn != nil {
			t.Errorf("a resync whose read of a held object failed was committed: %s", r.Description)
		}
	}
	sameObject(t, "failed read", before[0], advConfigMap(t, ns, "a-first"))
	sameObject(t, "failed read", before[1], advConfigMap(t, ns, "a-second"))

	refuse.Store(false)
	controlplanetest.Eventually(t, wait, "a healing resync committed, a held", func() bool {
		return committedResync(d) && has(readyMessage(t, webapps, ns, "a"), "its 2 objects are held as they are")
	})
	sameObject(t, "held", before[0], advConfigMap(t, ns, "a-first"))
	sameObject(t, "held", before[1], advConfigMap(t, ns, "a-second"))
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// updateImage sets the WebApp's image (a new generation).
func updateImage(t *testing.T, webapps democtl.WebAppController, ns, name, image string) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		app, err := webapps.Get(t.Context(), ns, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		app.Spec.Image = image
		_, err = webapps.Update(t.Context(), app)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
