package dependents_test

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	demo "github.com/lariat-dev/lariat/generated/controllers/demo.lariat.dev"
	democtl "github.com/lariat-dev/lariat/generated/controllers/demo.lariat.dev/v1"
	"github.com/lariat-dev/lariat/pkg/apply"
	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/condition"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
	"github.com/lariat-dev/lariat/pkg/generic"
)

const benchOwners, benchChildren = 100, 5

// counting counts the requests made through a config.
type counting struct {
	n    atomic.Int64
	next http.RoundTripper
}

func (c *counting) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.next.RoundTrip(r)
}

// chain returns an owner's ConfigMaps, each ordered after the one before.
func chain(app *demov1.WebApp) []*corev1.ConfigMap {
	out := make([]*corev1.ConfigMap, benchChildren)
	for i := range out {
		out[i] = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", app.Name, i), Namespace: app.Namespace},
			Data: map[string]string{"image": app.Spec.Image}}
	}
	return out
}

// BenchmarkConverge100x5 measures how long 100 owners with 5 objects each
// take to converge (every object on the server), and the API requests
// per owner: with ordered dependents (each ConfigMap after the one before)
// and with a plain generating handler, which ignores ordering.
func BenchmarkConverge100x5(b *testing.B) {
	for _, mode := range []string{"dependents", "generating"} {
		b.Run(mode, func(b *testing.B) {
			for range b.N {
				converge(b, mode)
			}
		})
	}
}

func converge(b *testing.B, mode string) {
	b.StopTimer()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ns := controlplanetest.Namespace(b, cp.Config())
	cfg := rest.CopyConfig(cp.Config())
	cfg.QPS, cfg.Burst = -1, 0
	cnt := &counting{}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { cnt.next = rt; return cnt })
	f, err := generic.NewFactoryFromConfig(cfg, nil, &generic.FactoryOptions{
		Cache: cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns}}})
	if err != nil {
		b.Fatal(err)
	}
	df, err := demo.NewFactory(f)
	if err != nil {
		b.Fatal(err)
	}
	webapps, err := df.Demo().V1().WebApp()
	if err != nil {
		b.Fatal(err)
	}
	d, err := registerBench(ctx, f, webapps, mode, ns)
	if err != nil {
		b.Fatal(err)
	}
	if err := f.Start(ctx, 4); err != nil {
		b.Fatal(err)
	}
	kube := controlplanetest.Clientset(cp.Config())
	before := cnt.n.Load()
	b.StartTimer()
	start := time.Now()
	for i := range benchOwners {
		app := &demov1.WebApp{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("app-%03d", i)},
			Spec: demov1.WebAppSpec{Image: "app:1"}}
		if _, err := webapps.Create(ctx, app); err != nil {
			b.Fatal(err)
		}
	}
	deadline := time.Now().Add(5 * time.Minute)
	for {
		cms, err := kube.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
		if err == nil && countOwned(cms.Items) >= benchOwners*benchChildren {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("%s: not converged after 5 minutes", mode)
		}
		time.Sleep(20 * time.Millisecond)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(elapsed.Milliseconds()), "ms/converge")
	// The owners' creates are the benchmark's own requests.
	b.ReportMetric(float64(cnt.n.Load()-before-benchOwners)/benchOwners, "requests/owner")
	cancel()
	if d != nil {
		_ = d.Wait(context.Background())
	}
	_ = f.Wait(context.Background())
}

// registerBench registers the benchmark's handler: ordered dependents, or
// a plain generating handler.
func registerBench(ctx context.Context, f *generic.Factory, webapps democtl.WebAppController, mode, ns string) (*dependents.Dependents, error) {
	if mode == "dependents" {
		return democtl.RegisterWebAppDependents(ctx, f, webapps, "bench", func(app *demov1.WebApp) ([]*dependents.Object, error) {
			var out []*dependents.Object
			for i, cm := range chain(app) {
				o := dependents.Of(cm)
				if i > 0 {
					o.After(out[i-1])
				}
				out = append(out, o)
			}
			return out, nil
		}, dependents.Options{FieldManager: "bench", Namespace: ns, Logger: controlplanetest.QuietLogger(),
			Kinds: []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap")}})
	}
	applier, err := apply.New(f.ControllerFactory().SharedCacheFactory().SharedClientFactory(), apply.Options{FieldManager: "bench"})
	if err != nil {
		return nil, err
	}
	democtl.RegisterWebAppGeneratingHandler(ctx, webapps, applier, condition.Cond("Applied"), "bench",
		func(app *demov1.WebApp, st demov1.WebAppStatus) ([]runtime.Object, demov1.WebAppStatus, error) {
			var out []runtime.Object
			for _, cm := range chain(app) {
				out = append(out, cm)
			}
			return out, st, nil
		}, nil)
	return nil, nil
}

// countOwned counts the ConfigMaps an owner has (not the namespace's own).
func countOwned(items []corev1.ConfigMap) int {
	n := 0
	for _, cm := range items {
		if len(cm.OwnerReferences) > 0 || cm.Labels["lariat.dev/managed-by"] == "bench" || cm.Data["image"] != "" {
			n++
		}
	}
	return n
}
