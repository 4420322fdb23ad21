package dependents_test

import (
	"context"
	"maps"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	democtl "github.com/lariat-dev/lariat/generated/controllers/demo.lariat.dev/v1"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
)

// configMapPerEntry returns one ConfigMap per entry of the WebApp's
// Config, named by its value, in key order.
func configMapPerEntry(ns string) dependents.Handler[*demov1.WebApp] {
	return func(app *demov1.WebApp) ([]*dependents.Object, error) {
		if app.Namespace != ns {
			return nil, nil
		}
		var objs []*dependents.Object
		for _, k := range slices.Sorted(maps.Keys(app.Spec.Config)) {
			objs = append(objs, dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: app.Spec.Config[k]},
				Data: map[string]string{"owner": app.Name}}))
		}
		return objs, nil
	}
}

// setConfig sets entry k of the WebApp's Config to v.
func setConfig(t *testing.T, webapps democtl.WebAppController, ns, name, k, v string) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		app, err := webapps.Get(t.Context(), ns, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		app.Spec.Config[k] = v
		_, err = webapps.Update(t.Context(), app)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestOwnerBeingDeletedGetsNothingNew: a WebApp whose deletion is held by
// a finalizer of the user's (or by foreground deletion) has a
// deletionTimestamp. As wrangler's generating handlers apply nothing for
// such an owner, the registration applies nothing new for it: an object
// its changed spec asks for is not created, and one deleted by hand is
// not created again. What exists stays (never deleted while it is
// wanted), and once the owner is gone the normal removal deletes it.
// b, an owner not being deleted, is the barrier: its changes come after
// a's on the same watches, and are applied.
func TestOwnerBeingDeletedGetsNothingNew(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	cmKind := []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap")}
	_, webapps := advStart(t, t.Context(), "deleting", cmKind, configMapPerEntry(ns))
	if _, err := webapps.Create(t.Context(), &demov1.WebApp{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "a",
		Finalizers: []string{advFinalizer}}, Spec: demov1.WebAppSpec{Image: "app:1",
		Config: map[string]string{"1": "a-keep", "2": "a-byhand"}}}); err != nil {
		t.Fatal(err)
	}
	advCreateApp(t, webapps, ns, "b", map[string]string{"1": "b-keep", "2": "b-byhand"})
	controlplanetest.Eventually(t, wait, "a's and b's ConfigMaps", func() bool {
		return advConfigMap(t, ns, "a-keep") != nil && advConfigMap(t, ns, "a-byhand") != nil &&
			advConfigMap(t, ns, "b-keep") != nil && advConfigMap(t, ns, "b-byhand") != nil
	})
	keep := advConfigMap(t, ns, "a-keep")
	if err := webapps.Delete(t.Context(), ns, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// A new object asked for by the owner being deleted, then b's.
	setConfig(t, webapps, ns, "a", "3", "a-new")
	setConfig(t, webapps, ns, "b", "3", "b-new")
	// b's change comes after a's deletion on the WebApps' watch: once b-new
	// exists, the registration has seen a being deleted. The ConfigMaps'
	// watch is another stream, so the deletions by hand wait for that.
	controlplanetest.Eventually(t, wait, "b's new ConfigMap", func() bool { return advConfigMap(t, ns, "b-new") != nil })
	// An object of each deleted by hand, a's first.
	kube := controlplanetest.Clientset(cp.Config())
	bOld := advConfigMap(t, ns, "b-byhand")
	for _, name := range []string{"a-byhand", "b-byhand"} {
		if err := kube.CoreV1().ConfigMaps(ns).Delete(t.Context(), name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	controlplanetest.Eventually(t, wait, "b's new ConfigMap, and b's ConfigMap deleted by hand repaired", func() bool {
		now := advConfigMap(t, ns, "b-byhand")
		return advConfigMap(t, ns, "b-new") != nil && now != nil && now.UID != bOld.UID
	})
	if cm := advConfigMap(t, ns, "a-new"); cm != nil {
		t.Errorf("a is being deleted, yet the ConfigMap a-new its spec asked for since was created (%v)", cm.Data)
	}
	if cm := advConfigMap(t, ns, "a-byhand"); cm != nil {
		t.Errorf("a is being deleted, yet its ConfigMap a-byhand deleted by hand was created again (%v)", cm.Data)
	}
	if now := advConfigMap(t, ns, "a-keep"); now == nil || now.UID != keep.UID {
		t.Fatalf("a is being deleted but still exists, and its ConfigMap a-keep was deleted or replaced: %v", now)
	}
	// The owner goes: its objects go with it.
	if _, err := webapps.Patch(t.Context(), ns, "a", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`)); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, wait, "a's ConfigMap a-keep deleted once a is gone", func() bool {
		return advConfigMap(t, ns, "a-keep") == nil
	})
	if cm := advConfigMap(t, ns, "a-new"); cm != nil {
		t.Errorf("a is gone, yet its ConfigMap a-new exists (%v)", cm.Data)
	}
}

// TestOwnerDeletedWhileStoppedGetsNothingNewAtTheRestart: a WebApp whose
// deletion a finalizer holds, deleted and changed while no replica ran,
// is first seen being deleted at the next start: nothing is known of what
// it last desired, so its live objects are held as they are (its summary
// says it is being deleted), the object its changed spec asks for is not
// created, and once it is gone its objects are deleted.
func TestOwnerDeletedWhileStoppedGetsNothingNewAtTheRestart(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	cmKind := []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap")}
	ctx, stop := context.WithCancel(t.Context())
	d, webapps := advStart(t, ctx, "deleting-stopped", cmKind, configMapPerEntry(ns))
	if _, err := webapps.Create(t.Context(), &demov1.WebApp{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "a",
		Finalizers: []string{advFinalizer}}, Spec: demov1.WebAppSpec{Image: "app:1",
		Config: map[string]string{"1": "a-keep"}}}); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, wait, "a's ConfigMap", func() bool { return advConfigMap(t, ns, "a-keep") != nil })
	keep := advConfigMap(t, ns, "a-keep")
	stop()
	waitCtx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	if err := d.Wait(waitCtx); err != nil {
		t.Fatal(err)
	}
	if err := webapps.Delete(t.Context(), ns, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	setConfig(t, webapps, ns, "a", "2", "a-new")
	d, webapps = advStart(t, t.Context(), "deleting-stopped", cmKind, configMapPerEntry(ns))
	controlplanetest.Eventually(t, wait, "a resync committed, a's summary saying it is being deleted", func() bool {
		return committedResync(d) && has(d.Summary(ns, "a").Message(), "is being deleted")
	})
	if cm := advConfigMap(t, ns, "a-new"); cm != nil {
		t.Errorf("a was being deleted at the restart, yet the ConfigMap a-new its spec asked for was created (%v)", cm.Data)
	}
	if now := advConfigMap(t, ns, "a-keep"); now == nil || now.UID != keep.UID {
		t.Fatalf("a is being deleted but still exists, and its ConfigMap a-keep was deleted or replaced at the restart: %v", now)
	}
	if _, err := webapps.Patch(t.Context(), ns, "a", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`)); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, wait, "a's ConfigMap a-keep deleted once a is gone", func() bool {
		return advConfigMap(t, ns, "a-keep") == nil
	})
}
