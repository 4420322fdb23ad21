package operator_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/examples/webapp/operator"
	democtl "github.com/lariat-dev/lariat/generated/controllers/demo.lariat.dev/v1"
	"github.com/lariat-dev/lariat/internal/dependentstest"
	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
	"github.com/lariat-dev/lariat/pkg/generic"
)

// The WebApp's children written on pkg/dependents, as a measure of what a
// move of the operator would save and cost (docs/dependents.md, "The
// WebApp operator on this API"). It is the children only: a ConfigMap
// with the URLs of the WebApps it depends on, a Deployment stamped with
// the ConfigMap's hash, and a NodePort Service, each waiting for the
// WebApps depended on to be available (latched). Its node ports are
// handed out in the loop's order, but without the operator's allocator's
// recovery (live Services first, then statuses, at a resync), its
// eviction by a late live Service, its freeing of a deleted WebApp's port
// and its "range full" waiting, nor the operator's status fields and
// reasons: see the docs for why those do not fit a per-owner handler yet.
// BEGIN children on dependents (counted in docs/dependents.md)

var (
	cmGVK     = corev1.SchemeGroupVersion.WithKind("ConfigMap")
	deployGVK = appsv1.SchemeGroupVersion.WithKind("Deployment")
	svcGVK    = corev1.SchemeGroupVersion.WithKind("Service")
)

// childrenOf returns the handler of WebApps' children, with node ports
// from r; its port map is the loop's (the handler runs on the loop only).
func childrenOf(r operator.PortRange) dependents.ViewHandler[*demov1.WebApp] {
	byApp, owner := map[string]int32{}, map[int32]string{}
	port := func(key string, live int32) int32 {
		if p, ok := byApp[key]; ok {
			return p
		}
		for p := r.First; p <= r.Last; p++ {
			if _, used := owner[p]; !used && (live == 0 || p == live) {
				byApp[key], owner[p] = p, key
				return p
			}
		}
		return 0
	}
	return func(app *demov1.WebApp, view dependents.View[*demov1.WebApp]) ([]*dependents.Object, error) {
		meta := metav1.ObjectMeta{Name: app.Name, Labels: map[string]string{operator.LabelApp: app.Name}}
		data := maps.Clone(app.Spec.Config)
		if data == nil {
			data = map[string]string{}
		}
		for _, dep := range app.Spec.DependsOn {
			if other, ok := view.Owner(app.Namespace, dep); ok {
				data[dep+operator.URLKeySuffix] = fmt.Sprintf("http://%s.%s.svc:%d", dep, app.Namespace, other.Spec.Port)
			}
		}
		cm := dependents.Of(&corev1.ConfigMap{ObjectMeta: meta, Data: data})
		deploy := dependents.Of(&appsv1.Deployment{ObjectMeta: meta, Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(ptr.Deref(app.Spec.Replicas, 1)),
			Selector: &metav1.LabelSelector{MatchLabels: meta.Labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: meta.Labels, Annotations: map[string]string{operator.AnnotationConfigHash: hash(data)}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: app.Spec.Image,
					Ports:   []corev1.ContainerPort{{Name: "http", ContainerPort: app.Spec.Port}},
					EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: app.Name}}}},
				}}},
			},
		}}).After(cm).ReadyWhen(exists)
		var live int32
		if obj, ok := view.Live(svcGVK, app.Namespace, app.Name); ok && len(obj.(*corev1.Service).Spec.Ports) > 0 {
			live = obj.(*corev1.Service).Spec.Ports[0].NodePort
		}
		nodePort := port(app.Namespace+"/"+app.Name, live)
		svc := dependents.Of(&corev1.Service{ObjectMeta: meta, Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeNodePort, Selector: meta.Labels,
			Ports: []corev1.ServicePort{{Name: "http", Port: app.Spec.Port, TargetPort: intstr.FromInt32(app.Spec.Port), NodePort: nodePort}},
		}}).After(deploy).ReadyWhen(func(obj runtime.Object) (bool, string) {
			ports := obj.(*corev1.Service).Spec.Ports
			return len(ports) > 0 && ports[0].NodePort == nodePort, "not at its node port yet"
		})
		objs := []*dependents.Object{cm, deploy, svc}
		for _, o := range objs {
			for _, dep := range app.Spec.DependsOn {
				o.RequiresOwnerAvailable(app.Namespace, dep)
			}
		}
		return objs, nil
	}
}

// exists is the readiness of a Deployment without pods (no kubelet here).
func exists(runtime.Object) (bool, string) { return true, "" }

// hash hashes a ConfigMap's data in key order.
func hash(data map[string]string) string {
	h := sha256.New()
	for _, k := range slices.Sorted(maps.Keys(data)) {
		fmt.Fprintf(h, "%s=%s\x00", k, data[k])
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// END children on dependents

// startOnDependents registers childrenOf for the WebApps of ns, on a
// factory that caches only the registration's objects, as the operator's
// does.
func startOnDependents(b testing.TB, ctx context.Context, ns string, r operator.PortRange) (democtl.WebAppController, func() error) {
	log := logrus.New()
	log.SetLevel(logrus.ErrorLevel)
	const manager = "webapp-on-dependents"
	f, webapps := dependentstest.Factory(b, cp.Config(), &generic.FactoryOptions{
		Cache: cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns}},
	})
	d, err := dependents.RegisterView(ctx, f, webapps, dependentstest.WebAppStatus(), "webapp", childrenOf(r), dependents.Options{
		FieldManager: manager, Namespace: ns, Kinds: []schema.GroupVersionKind{cmGVK, deployGVK, svcGVK},
		Condition: operator.Ready, Logger: log,
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := f.Start(ctx, 2); err != nil {
		b.Fatal(err)
	}
	return webapps, func() error { return d.Wait(context.WithoutCancel(ctx)) }
}

// BenchmarkConverge100OnDependents is BenchmarkConverge100 with the
// children on pkg/dependents (childrenOf) instead of the operator.
func BenchmarkConverge100OnDependents(b *testing.B) {
	benchmarkConvergeWith(b, 100, false, startOnDependents, nil)
}

// BenchmarkConvergeChain100OnDependents is BenchmarkConvergeChain100 with
// the children on pkg/dependents.
func BenchmarkConvergeChain100OnDependents(b *testing.B) {
	benchmarkConvergeWith(b, 100, true, startOnDependents, nil)
}

// TestChildrenOnDependentsKeepTheWebAppsObjects: the handler measured
// above keeps what the operator's children are (the URL of a dependency
// in the ConfigMap, the ConfigMap's hash on the pod template, unique node
// ports), and a WebApp depended on going takes its dependent's objects
// down, as the operator's availability does.
func TestChildrenOnDependentsKeepTheWebAppsObjects(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	ctx, cancel := context.WithCancel(t.Context())
	r := operator.PortRange{First: 31900, Last: 31909}
	webapps, wait := startOnDependents(t, ctx, ns, r)
	t.Cleanup(func() { cancel(); _ = wait() })
	kube := controlplanetest.Clientset(cp.Config())
	for _, app := range []*demov1.WebApp{
		{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: ns}, Spec: demov1.WebAppSpec{Image: "postgres", Port: 5432}},
		{ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: ns},
			Spec: demov1.WebAppSpec{Image: "api", Port: 80, DependsOn: []string{"db"}, Config: map[string]string{"k": "v"}}},
	} {
		if _, err := webapps.Create(ctx, app); err != nil {
			t.Fatal(err)
		}
	}
	controlplanetest.Eventually(t, time.Minute, "both WebApps Ready", func() bool {
		for _, name := range []string{"db", "api"} {
			app, err := webapps.Get(ctx, ns, name, metav1.GetOptions{})
			if err != nil || !operator.Ready.IsTrue(app.Status.Conditions) {
				return false
			}
		}
		return true
	})
	cm, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "api", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := "http://db." + ns + ".svc:5432"; cm.Data["db.url"] != want || cm.Data["k"] != "v" {
		t.Fatalf("api's ConfigMap holds %v; want db.url %s and k v", cm.Data, want)
	}
	d, err := kube.AppsV1().Deployments(ns).Get(ctx, "api", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Spec.Template.Annotations[operator.AnnotationConfigHash]; got != hash(cm.Data) {
		t.Fatalf("api's pod template has config hash %q; its ConfigMap's is %q", got, hash(cm.Data))
	}
	ports := map[int32]string{}
	for _, name := range []string{"db", "api"} {
		svc, err := kube.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		p := svc.Spec.Ports[0].NodePort
		if p < r.First || p > r.Last || ports[p] != "" {
			t.Fatalf("%s's Service has node port %d (range %d-%d, taken by %q)", name, p, r.First, r.Last, ports[p])
		}
		ports[p] = name
	}
	if err := webapps.Delete(ctx, ns, "db", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, time.Minute, "db's and api's objects deleted", func() bool {
		return childrenGone(ctx, kube, ns, "db") == nil && childrenGone(ctx, kube, ns, "api") == nil
	})
}
