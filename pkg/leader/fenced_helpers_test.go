package leader_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/generic"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// newElector is an Elector on the Lease ns/"lease" with the tests' timings
// and a lease client of its own.
func newElector(t *testing.T, ns, id string, opts ...leader.Option) *leader.Elector {
	t.Helper()
	return newElectorOn(t, cp.Config(), ns, id, opts...)
}

// newElectorOn is newElector with its lease client on cfg (a proxy's, or
// one wrapped to watch or slow the renewals), whose requests time out
// after the renew deadline.
func newElectorOn(t *testing.T, cfg *rest.Config, ns, id string, opts ...leader.Option) *leader.Elector {
	t.Helper()
	leaseCfg := rest.CopyConfig(cfg)
	leaseCfg.Timeout = renewDeadline
	e, err := leader.New(kubernetes.NewForConfigOrDie(leaseCfg).CoordinationV1(), ns, "lease", append([]leader.Option{
		leader.WithIdentity(id), leader.WithLeaseDuration(leaseDuration), leader.WithRenewDeadline(renewDeadline),
		leader.WithRetryPeriod(retryPeriod), leader.WithLogger(controlplanetest.QuietLogger()),
	}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// fencedConfigMaps returns a factory of ns on fenced (a config of
// e.Fence), built with e's FactoryOptions, and its ConfigMap controller.
func fencedConfigMaps(t *testing.T, e *leader.Elector, fenced *rest.Config, ns string) (*generic.Factory, *generic.Controller[*corev1.ConfigMap, *corev1.ConfigMapList]) {
	t.Helper()
	f, err := generic.NewFactoryFromConfig(fenced, nil, e.FactoryOptions(&generic.FactoryOptions{
		Cache:      cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns}, SyncTimeout: time.Minute},
		Controller: controller.SharedControllerFactoryOptions{Logger: controlplanetest.QuietLogger()},
	}))
	if err != nil {
		t.Fatal(err)
	}
	cms, err := generic.NewController[*corev1.ConfigMap, *corev1.ConfigMapList](corev1.SchemeGroupVersion.WithKind("ConfigMap"), "configmaps", true, f.ControllerFactory())
	if err != nil {
		t.Fatal(err)
	}
	return f, cms
}

// runTerms runs f's controllers in e's terms until the test ends; the
// proxy is resumed first, so that a stalled replica's calls return.
func runTerms(t *testing.T, e *leader.Elector, f *generic.Factory, proxy *controlplanetest.Proxy) {
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = e.Run(ctx, func(ctx context.Context) error { return f.Run(ctx, 2) })
	}()
	t.Cleanup(func() {
		proxy.Resume()
		cancel()
		<-done
	})
}
