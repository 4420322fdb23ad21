package leader_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/generic"
	"github.com/lariat-dev/lariat/pkg/leader"
)

var cp *controlplane.ControlPlane

func TestMain(m *testing.M) {
	// client-go's leaderelection logs every attempt through klog; the
	// tests' assertions say what matters.
	klog.SetLogger(logr.Discard())
	controlplanetest.Main(m, controlplane.Options{}, &cp)
}

// Short durations, so tests take seconds; the margin between the renew
// deadline and the lease duration (1 s) is what the safety assertions rest
// on.
const (
	leaseDuration = 2 * time.Second
	renewDeadline = 1 * time.Second
	retryPeriod   = 250 * time.Millisecond
	timeout       = 30 * time.Second
)

// handledBy is the annotation a replica's handler writes on each ConfigMap.
const handledBy = "test.lariat.dev/handled-by"

// replica is one operator instance of the tests: its own Elector, whose
// lease client goes through a proxy the test can cut, and its own factory
// with a ConfigMap handler that marks each ConfigMap with its name. Its
// data path does not go through the proxy: cut off from the lease, it could
// still write, which is what the tests check it does not.
type replica struct {
	name   string
	e      *leader.Elector
	proxy  *controlplanetest.Proxy
	writes controlplanetest.WriteLog // data writes issued
	renews controlplanetest.WriteLog // lease writes the API server accepted, by time sent
	terms  atomic.Int32
	cancel context.CancelFunc
	done   chan error
}

func startReplica(t *testing.T, ns, name string) *replica {
	t.Helper()
	r := &replica{name: name, done: make(chan error, 1)}
	proxy, leaseCfg := controlplanetest.NewProxy(t, cp.Config())
	r.proxy = proxy
	leaseCfg = r.renews.Wrap(leaseCfg, true)
	e := newElectorOn(t, leaseCfg, ns, name)
	r.e = e
	// The fence is outermost: the recorder sees only what went out.
	dataCfg := e.Fence(r.writes.Wrap(cp.Config(), false))
	f, err := generic.NewFactoryFromConfig(dataCfg, nil, &generic.FactoryOptions{
		Cache:      cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns}, SyncTimeout: time.Minute},
		Controller: controller.SharedControllerFactoryOptions{Logger: controlplanetest.QuietLogger()},
	})
	if err != nil {
		t.Fatal(err)
	}
	cms, err := generic.NewController[*corev1.ConfigMap, *corev1.ConfigMapList](corev1.SchemeGroupVersion.WithKind("ConfigMap"), "configmaps", true, f.ControllerFactory())
	if err != nil {
		t.Fatal(err)
	}
	cms.OnChange(t.Context(), "mark", func(_ string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
		if cm == nil || cm.Annotations[handledBy] != "" {
			return cm, nil
		}
		cm = cm.DeepCopy()
		if cm.Annotations == nil {
			cm.Annotations = map[string]string{}
		}
		cm.Annotations[handledBy] = name
		return cms.Update(t.Context(), cm)
	})
	ctx, cancel := context.WithCancel(t.Context())
	r.cancel = cancel
	go func() {
		r.done <- e.Run(ctx, func(ctx context.Context) error {
			r.terms.Add(1)
			return f.Run(ctx, 2)
		})
	}()
	t.Cleanup(func() {
		cancel()
		<-r.done
	})
	return r
}

// stop ends the replica's Run and returns when it has returned.
func (r *replica) stop(t *testing.T) time.Time {
	t.Helper()
	r.cancel()
	if err := <-r.done; err != nil {
		t.Fatalf("%s: Run: %v", r.name, err)
	}
	r.done <- nil // for the cleanup
	return time.Now()
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	controlplanetest.Eventually(t, timeout, what, cond)
}

// leaderOf waits until one of rs holds the lease and returns it and the
// other.
func leaderOf(t *testing.T, a, b *replica) (*replica, *replica) {
	t.Helper()
	var l, s *replica
	eventually(t, "a leader", func() bool {
		switch {
		case a.e.Holding():
			l, s = a, b
		case b.e.Holding():
			l, s = b, a
		}
		return l != nil
	})
	return l, s
}

func createCM(t *testing.T, ns, name string) {
	t.Helper()
	_, err := controlplanetest.Clientset(cp.Config()).CoreV1().ConfigMaps(ns).Create(t.Context(),
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

// waitHandled waits for the ConfigMap to be marked and returns by whom.
func waitHandled(t *testing.T, ns, name string) string {
	t.Helper()
	var by string
	eventually(t, "ConfigMap "+name+" handled", func() bool {
		cm, err := controlplanetest.Clientset(cp.Config()).CoreV1().ConfigMaps(ns).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		by = cm.Annotations[handledBy]
		return by != ""
	})
	return by
}

// firstAfter returns the earliest of times after t (zero if none).
func firstAfter(times []time.Time, t time.Time) time.Time {
	var f time.Time
	for _, x := range times {
		if x.After(t) && (f.IsZero() || x.Before(f)) {
			f = x
		}
	}
	return f
}
