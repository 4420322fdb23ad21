package generic_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/internal/testkinds"
	"github.com/lariat-dev/lariat/pkg/apply"
	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/generic"
)

var cp *controlplane.ControlPlane

func TestMain(m *testing.M) {
	controlplanetest.Main(m, controlplane.Options{CRDDirs: []string{testkinds.CRDDir()}}, &cp)
}

const timeout = 30 * time.Second

var (
	configMapGVK = corev1.SchemeGroupVersion.WithKind("ConfigMap")
	namespaceGVK = corev1.SchemeGroupVersion.WithKind("Namespace")
	configMapsGR = corev1.Resource("configmaps")
)

type configMaps = generic.Controller[*corev1.ConfigMap, *corev1.ConfigMapList]

// newFactory returns a generic factory whose informers only see namespace ns
// (cluster-scoped kinds are unaffected), so tests sharing the control plane
// do not see each other's objects. cfg lets tests count requests.
func newFactory(t *testing.T, cfg *rest.Config, ns string) *generic.Factory {
	t.Helper()
	return newFactoryOf(t, cfg, cache.Options{Namespace: ns}, controller.SharedControllerFactoryOptions{})
}

// newFactoryOf returns a generic factory over cfg whose informers are scoped
// by scope, with controllers built with ctl, logging nowhere.
func newFactoryOf(t *testing.T, cfg *rest.Config, scope cache.Options, ctl controller.SharedControllerFactoryOptions) *generic.Factory {
	t.Helper()
	ctl.Logger = controlplanetest.QuietLogger()
	f, err := generic.NewFactoryFromConfig(cfg, nil, &generic.FactoryOptions{
		Cache:      cache.SharedCacheFactoryOptions{Default: scope, SyncTimeout: time.Minute},
		Controller: ctl,
	})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// newApplier returns an applier over cfg with f's scheme, as the
// generating handlers of the tests use.
func newApplier(t *testing.T, cfg *rest.Config, f *generic.Factory) *apply.Applier {
	t.Helper()
	clients, err := client.NewSharedClientFactory(cfg, &client.SharedClientFactoryOptions{Scheme: f.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	applier, err := apply.New(clients, apply.Options{FieldManager: "generic-test"})
	if err != nil {
		t.Fatal(err)
	}
	return applier
}

// configMapExists reads ns/name live; an error other than NotFound fails
// the test.
func configMapExists(t *testing.T, ns, name string) bool {
	t.Helper()
	_, err := kube().CoreV1().ConfigMaps(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return err == nil
}

func newConfigMaps(t *testing.T, f *generic.Factory) *configMaps {
	t.Helper()
	c, err := generic.NewController[*corev1.ConfigMap, *corev1.ConfigMapList](configMapGVK, "configmaps", true, f.ControllerFactory())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func start(t *testing.T, f *generic.Factory) context.Context {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if err := f.Start(ctx, 2); err != nil {
		t.Fatal(err)
	}
	return ctx
}

// eventually polls cond until it holds or the timeout passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	controlplanetest.Eventually(t, timeout, what, cond)
}

// kube returns a clientset without client-side throttling, standing in for
// the other writers an operator shares the cluster with.
func kube() *kubernetes.Clientset { return controlplanetest.Clientset(cp.Config()) }

func createCM(t *testing.T, ns, name string, finalizers ...string) *corev1.ConfigMap {
	t.Helper()
	cm, err := kube().CoreV1().ConfigMaps(ns).Create(context.Background(), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Finalizers: finalizers},
		Data:       map[string]string{"v": "0"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return cm
}

func getCM(t *testing.T, ns, name string) *corev1.ConfigMap {
	t.Helper()
	cm, err := kube().CoreV1().ConfigMaps(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return cm
}

// requestCounter counts the requests a config sends, by method, for
// resources whose path contains pathPart.
type requestCounter struct {
	pathPart string
	mu       sync.Mutex
	counts   map[string]int
}

// config returns a copy of the control plane's config whose
// requests c counts.
func (c *requestCounter) config() *rest.Config {
	c.counts = map[string]int{}
	cfg := rest.CopyConfig(cp.Config())
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if strings.Contains(r.URL.Path, c.pathPart) {
				c.mu.Lock()
				c.counts[r.Method]++
				c.mu.Unlock()
			}
			return rt.RoundTrip(r)
		})
	})
	return cfg
}

func (c *requestCounter) count(method string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.counts[method]
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// counter is a concurrency-safe call counter.
type counter struct{ n atomic.Int64 }

func (c *counter) inc() int64 { return c.n.Add(1) }

func (c *counter) get() int64 { return c.n.Load() }
