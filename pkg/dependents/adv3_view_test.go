package dependents_test

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/internal/dependentstest"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
)

// TestAdv3ViewReadsAnotherOwnersStaleStatus: a ViewHandler reads another
// owner's status through View.Owner (the node port the WebApp operator
// would recover from the statuses, docs/dependents.md). The owner kind is
// watched with GenerationChanged, so a status change of the owner it read
// neither computes the reader again ("when an owner it read ... changes,
// the owner is computed again") nor reaches the loop's picture: even when
// the reader is computed again for a change of its own, View.Owner hands
// it the other owner's status as of that owner's last spec change, with
// nothing to say it is stale (here the node port 0 where the API server
// has had 31000 since before the reader's change).
func TestAdv3ViewReadsAnotherOwnersStaleStatus(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	cmGVK := corev1.SchemeGroupVersion.WithKind("ConfigMap")
	reads := func(app *demov1.WebApp, view dependents.View[*demov1.WebApp]) ([]*dependents.Object, error) {
		if app.Namespace != ns {
			return nil, nil
		}
		data := map[string]string{"generation": fmt.Sprint(app.Generation)}
		if name := app.Spec.Config["reads"]; name != "" {
			data["port"] = "none"
			if other, ok := view.Owner(app.Namespace, name); ok {
				data["port"] = fmt.Sprint(other.Status.NodePort)
			}
		}
		return []*dependents.Object{dependents.Of(&corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: app.Name + "-cfg"}, Data: data})}, nil
	}
	f, webapps := dependentstest.Factory(t, cp.Config(), nil)
	d, err := dependents.RegisterView(t.Context(), f, webapps, webAppStatus(), "adv3-view", reads, dependents.Options{
		FieldManager: "adv3-view", Kinds: []schema.GroupVersionKind{cmGVK}, Logger: controlplanetest.QuietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Start(t.Context(), 2); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(t.Context()), wait)
		defer cancel()
		if err := d.Wait(ctx); err != nil {
			t.Errorf("stopping: %v", err)
		}
	})
	advCreateApp(t, webapps, ns, "o", map[string]string{})
	advCreateApp(t, webapps, ns, "r", map[string]string{"reads": "o"})
	controlplanetest.Eventually(t, wait, "r's ConfigMap", func() bool {
		cm := advConfigMap(t, ns, "r-cfg")
		return cm != nil && cm.Data["port"] == "0"
	})

	// o's status gets its node port (as the allocator would write it).
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		o, err := webapps.Get(t.Context(), ns, "o", metav1.GetOptions{})
		if err != nil {
			return err
		}
		o.Status.NodePort = 31000
		_, err = webapps.UpdateStatus(t.Context(), o)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, wait, "o's node port in the informer's cache", func() bool {
		o, err := webapps.Cache().Get(ns, "o")
		return err == nil && o.Status.NodePort == 31000
	})
	// r is computed again for a change of its own.
	gen := touch(t, webapps, ns, "r")
	controlplanetest.Eventually(t, wait, "r's ConfigMap at its new generation", func() bool {
		cm := advConfigMap(t, ns, "r-cfg")
		return cm != nil && cm.Data["generation"] == fmt.Sprint(gen)
	})
	if port := advConfigMap(t, ns, "r-cfg").Data["port"]; port != "31000" {
		t.Errorf("r, computed again after o's status had node port 31000, read o's node port %s through View.Owner", port)
	}
}
