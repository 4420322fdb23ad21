package dependents_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/internal/dependentstest"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
)

// TestAdv13ReplicaStoppedBetweenCreates: WebApp a has two ConfigMaps, the
// second ordered after the first. The replica is stopped while the apply
// of the second is in flight (the first created); another replica starts.
// The first ConfigMap is the same object (not deleted, not created
// again), the second is created, and a is Ready.
func TestAdv13ReplicaStoppedBetweenCreates(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	cfg, entered := adv13InFlight(ns, http.MethodPatch, "a-second")
	pair := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		if app.Namespace != ns {
			return nil, nil
		}
		return heldPair(app)
	}
	ctx, stop := context.WithCancel(t.Context())
	opts := dependents.Options{FieldManager: "adv13-stopped", Kinds: heldKinds, Logger: controlplanetest.QuietLogger()}
	d, webapps := dependentstest.Start(t, ctx, cfg, nil, "adv13-stopped", pair, opts)
	advCreateApp(t, webapps, ns, "a", map[string]string{"cm": "a"})
	<-entered
	first := advConfigMap(t, ns, "a-first")
	if first == nil {
		t.Fatal("a-first not created before a-second's apply")
	}
	stop()
	waitCtx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	if err := d.Wait(waitCtx); err != nil {
		t.Logf("the stopped replica: %v", err)
	}
	_, webapps = dependentstest.Start(t, t.Context(), cp.Config(), nil, "adv13-stopped", pair, opts)
	controlplanetest.Eventually(t, wait, "a Ready with both ConfigMaps", func() bool {
		return advConfigMap(t, ns, "a-second") != nil && adv13Ready(t, webapps, ns, "a")
	})
	if now := advConfigMap(t, ns, "a-first"); now == nil || now.UID != first.UID {
		t.Errorf("a-first was deleted or created again across the stop: %v", now)
	}
}

// TestAdv13ReplicaStoppedMidDeleteOwnerCreatedAgain: WebApp a is deleted;
// its ConfigMaps go in reverse order, and the replica is stopped while
// the DELETE of a-second is in flight. While no replica runs, a is
// created again under its name (a new UID). The next replica gives the
// new a both ConfigMaps, naming its UID, and a is Ready.
func TestAdv13ReplicaStoppedMidDeleteOwnerCreatedAgain(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	cfg, entered := adv13InFlight(ns, http.MethodDelete, "a-second")
	pair := func(app *demov1.WebApp) ([]*dependents.Object, error) {
		if app.Namespace != ns {
			return nil, nil
		}
		data := map[string]string{"uid": string(app.UID)}
		first := dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a-first"}, Data: data})
		second := dependents.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a-second"}, Data: data}).After(first)
		return []*dependents.Object{first, second}, nil
	}
	ctx, stop := context.WithCancel(t.Context())
	opts := dependents.Options{FieldManager: "adv13-middelete", Kinds: heldKinds, Logger: controlplanetest.QuietLogger()}
	d, webapps := dependentstest.Start(t, ctx, cfg, nil, "adv13-middelete", pair, opts)
	advCreateApp(t, webapps, ns, "a", map[string]string{"cm": "a"})
	controlplanetest.Eventually(t, wait, "a Ready", func() bool { return adv13Ready(t, webapps, ns, "a") })
	if err := webapps.Delete(t.Context(), ns, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	<-entered
	stop()
	waitCtx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	if err := d.Wait(waitCtx); err != nil {
		t.Logf("the stopped replica: %v", err)
	}
	fresh := advCreateApp(t, webapps, ns, "a", map[string]string{"cm": "a"})
	_, webapps = dependentstest.Start(t, t.Context(), cp.Config(), nil, "adv13-middelete", pair, opts)
	controlplanetest.Eventually(t, wait, "the new a Ready, both ConfigMaps naming its UID", func() bool {
		f, s := advConfigMap(t, ns, "a-first"), advConfigMap(t, ns, "a-second")
		return f != nil && s != nil && f.Data["uid"] == string(fresh.UID) && s.Data["uid"] == string(fresh.UID) &&
			adv13Ready(t, webapps, ns, "a")
	})
}

// adv13InFlight returns a config whose requests of method on ConfigMap
// name in ns never reach the server: each waits until its context ends
// (the replica stops), and entered is closed when the first arrives.
func adv13InFlight(ns, method, name string) (*rest.Config, <-chan struct{}) {
	entered := make(chan struct{})
	var once sync.Once
	cfg := rest.CopyConfig(cp.Config())
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			if req.Method == method && strings.HasSuffix(req.URL.Path, "/namespaces/"+ns+"/configmaps/"+name) {
				once.Do(func() { close(entered) })
				<-req.Context().Done()
				return nil, req.Context().Err()
			}
			return next.RoundTrip(req)
		})
	})
	return cfg, entered
}
