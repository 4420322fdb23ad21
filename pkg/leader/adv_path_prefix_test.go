package leader_test

import (
	"context"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/generic"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// advPrefixedConfig serves the API server of cfg under a path prefix, as
// Rancher's cluster proxy (/k8s/clusters/<id>) and other API gateways do,
// and returns a config whose Host carries that prefix.
func advPrefixedConfig(t *testing.T, cfg *rest.Config, prefix string) *rest.Config {
	t.Helper()
	tr, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	target, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.URL.Path = strings.TrimPrefix(r.In.URL.Path, prefix)
			r.Out.URL.RawPath = ""
		},
		Transport:     tr,
		FlushInterval: -1,
	}
	srv := httptest.NewTLSServer(rp)
	t.Cleanup(srv.Close)
	return &rest.Config{Host: srv.URL + prefix, TLSClientConfig: rest.TLSClientConfig{Insecure: true}, QPS: -1}
}

// advHeldWriter is a handler of one ConfigMap that reports the copy it was
// given, waits for go, then writes the object (a merge patch without a
// resourceVersion) and reports the write's error.
type advHeldWriter struct {
	name    string
	started chan string // the resourceVersion of the handler's copy
	proceed chan struct{}
	result  chan error
	once    sync.Once
}

func (w *advHeldWriter) register(t *testing.T, f *generic.Factory, kube kubernetes.Interface, ns string) {
	t.Helper()
	cms, err := generic.NewController[*corev1.ConfigMap, *corev1.ConfigMapList](corev1.SchemeGroupVersion.WithKind("ConfigMap"), "configmaps", true, f.ControllerFactory())
	if err != nil {
		t.Fatal(err)
	}
	cms.OnChange(t.Context(), "held-write", func(_ string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
		if cm == nil || cm.Name != w.name {
			return cm, nil
		}
		first := false
		w.once.Do(func() { first = true })
		if !first {
			return cm, nil
		}
		w.started <- cm.ResourceVersion
		<-w.proceed
		_, err := kube.CoreV1().ConfigMaps(ns).Patch(context.Background(), w.name, types.MergePatchType, []byte(`{"data":{"by":"handler"}}`), metav1.PatchOptions{})
		w.result <- err
		return cm, nil
	})
}

// TestAdvConditionalWritesNeedAnAPIServerAtTheHostsRoot: the fence makes a
// handler's write of the object it handles conditional on the copy the
// handler was given, finding the object from the request's URL. It reads
// the URL as /api/... or /apis/... from the root; behind an API server
// address with a path prefix (rest.Config.Host
// "https://rancher/k8s/clusters/c-1", the usual way to reach a downstream
// cluster through Rancher, which lasso and wrangler users do), it finds no
// object, and the write goes out unconditional. Both factories below are
// built alike from Fence and FactoryOptions of one leading Elector; each
// handler's copy is overwritten by someone else before the handler writes.
// The direct one's write is refused with a conflict, as documented; the
// prefixed one's lands over the change it never saw.
func TestAdvConditionalWritesNeedAnAPIServerAtTheHostsRoot(t *testing.T) {
	cfg := cp.Config()
	kube := controlplanetest.Clientset(cfg)
	ns := controlplanetest.Namespace(t, cfg)
	ctx := t.Context()
	e, err := leader.New(kube.CoordinationV1(), ns, "prefix", leader.WithIdentity("a"),
		leader.WithLeaseDuration(leaseDuration), leader.WithRenewDeadline(renewDeadline), leader.WithRetryPeriod(retryPeriod),
		leader.WithLogger(controlplanetest.QuietLogger()))
	if err != nil {
		t.Fatal(err)
	}
	writers := map[string]*advHeldWriter{}
	var factories []*generic.Factory
	for name, base := range map[string]*rest.Config{"direct": cfg, "via-prefix": advPrefixedConfig(t, cfg, "/k8s/clusters/c-1")} {
		// Each factory caches only its own object, so that no pass of
		// the other one touches the Elector's record of it.
		opts := e.FactoryOptions(&generic.FactoryOptions{
			Cache:      cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns, LabelSelector: "adv=" + name}, SyncTimeout: time.Minute},
			Controller: controller.SharedControllerFactoryOptions{Logger: controlplanetest.QuietLogger()},
		})
		fenced := e.Fence(base)
		f, err := generic.NewFactoryFromConfig(fenced, nil, opts)
		if err != nil {
			t.Fatal(err)
		}
		w := &advHeldWriter{name: name, started: make(chan string, 1), proceed: make(chan struct{}), result: make(chan error, 1)}
		w.register(t, f, kubernetes.NewForConfigOrDie(fenced), ns)
		writers[name] = w
		factories = append(factories, f)
	}
	t.Cleanup(func() {
		for _, w := range writers {
			select {
			case <-w.proceed:
			default:
				close(w.proceed)
			}
		}
	})
	controlplanetest.Run(t, func(ctx context.Context) error {
		return e.Run(ctx, func(ctx context.Context) error {
			for _, f := range factories {
				if err := f.Start(ctx, 1); err != nil {
					return err
				}
			}
			<-ctx.Done()
			var errs []error
			for _, f := range factories {
				errs = append(errs, f.Wait(context.WithoutCancel(ctx)))
			}
			for _, err := range errs {
				if err != nil {
					return err
				}
			}
			return nil
		})
	})
	controlplanetest.Eventually(t, timeout, "A leads", e.Holding)

	results := map[string]error{}
	for _, name := range []string{"direct", "via-prefix"} {
		w := writers[name]
		if _, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"adv": name}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		var rv string
		select {
		case rv = <-w.started:
		case <-time.After(timeout):
			t.Fatalf("the handler of %s never ran", name)
		}
		// Someone else changes the object the handler holds a copy of.
		changed, err := kube.CoreV1().ConfigMaps(ns).Patch(ctx, name, types.MergePatchType, []byte(`{"data":{"by":"someone else"}}`), metav1.PatchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		close(w.proceed)
		results[name] = <-w.result
		t.Logf("%s: handler's copy at %s, changed to %s meanwhile; the handler's write: %v", name, rv, changed.ResourceVersion, results[name])
	}
	if !apierrors.IsConflict(results["direct"]) {
		t.Fatalf("control: the direct handler's write was not refused with a conflict: %v", results["direct"])
	}
	if !apierrors.IsConflict(results["via-prefix"]) {
		cm, _ := kube.CoreV1().ConfigMaps(ns).Get(ctx, "via-prefix", metav1.GetOptions{})
		t.Fatalf("behind a path prefix, the handler's write of the object it handles carried no precondition: it returned %v and overwrote a change the handler never saw (data %v)", results["via-prefix"], cm.Data)
	}
}
