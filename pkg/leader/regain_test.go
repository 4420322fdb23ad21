package leader_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/generic"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// regainPass is one handler run of the regaining replica.
type regainPass struct {
	term         int32 // the term the handler began in
	began, ended time.Time
	patchErr     error
}

// TestOldTermsHandlerIsFencedWhenTheLeaseIsRegained (issue 24, suspicion
// 1): a leader's handler outlives its term and the stop grace period (the
// lease is left to expire), and the same replica then wins the lease
// again while that handler still runs. The new term must not run the key
// beside the old handler, and the old handler's write, issued after its
// term ended, must be refused even though its replica leads again: it
// acts on what it read in a term that is over.
func TestOldTermsHandlerIsFencedWhenTheLeaseIsRegained(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	createCM(t, ns, "stuck")
	key := ns + "/stuck"

	// The lease client goes through a proxy the test cuts to end the term;
	// the data path does not, so the old handler's write reaches the API
	// server unless the fence refuses it.
	proxy, leaseCfg := controlplanetest.NewProxy(t, cp.Config())
	e := newElectorOn(t, leaseCfg, ns, "regainer")
	f, err := generic.NewFactoryFromConfig(e.Fence(cp.Config()), nil, e.FactoryOptions(&generic.FactoryOptions{
		Cache:      cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns}, SyncTimeout: time.Minute},
		Controller: controller.SharedControllerFactoryOptions{Logger: controlplanetest.QuietLogger(), StopGrace: time.Second},
	}))
	if err != nil {
		t.Fatal(err)
	}
	cms, err := generic.NewController[*corev1.ConfigMap, *corev1.ConfigMapList](corev1.SchemeGroupVersion.WithKind("ConfigMap"), "configmaps", true, f.ControllerFactory())
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu      sync.Mutex
		terms   int32
		runs    []*regainPass
		release = make(chan struct{})
		began   = make(chan struct{})
	)
	var releaseOnce, beganOnce sync.Once
	defer releaseOnce.Do(func() { close(release) })
	cms.OnChange(t.Context(), "regain", func(k string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
		if k != key || cm == nil {
			return nil, nil
		}
		mu.Lock()
		p := &regainPass{term: terms, began: time.Now()}
		runs = append(runs, p)
		first := len(runs) == 1
		mu.Unlock()
		// The first pass holds on past its term, then writes what it
		// decided in it; later passes write at once.
		field := "fresh"
		if first {
			field = "stale"
			beganOnce.Do(func() { close(began) })
			<-release
		}
		_, err := cms.Patch(t.Context(), ns, "stuck", types.MergePatchType, []byte(`{"data":{"`+field+`":"1"}}`))
		mu.Lock()
		p.ended, p.patchErr = time.Now(), err
		mu.Unlock()
		return nil, nil // not retried: the test looks at each attempt
	})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- e.Run(ctx, func(ctx context.Context) error {
			mu.Lock()
			terms++
			mu.Unlock()
			return f.Run(ctx, 2)
		})
	}()
	t.Cleanup(func() {
		proxy.Restore()
		releaseOnce.Do(func() { close(release) })
		cancel()
		<-done
	})
	termsNow := func() int32 {
		mu.Lock()
		defer mu.Unlock()
		return terms
	}

	select {
	case <-began:
	case <-time.After(timeout):
		t.Fatal("the handler never began")
	}
	proxy.Cut()
	eventually(t, "the first term ending", func() bool { return !e.Holding() })
	proxy.Restore()
	eventually(t, "the replica leading again", func() bool { return termsNow() == 2 && e.Holding() })
	releaseOnce.Do(func() { close(release) })
	eventually(t, "a pass of the second term", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(runs) > 1 && !runs[len(runs)-1].ended.IsZero()
	})

	mu.Lock()
	defer mu.Unlock()
	old := runs[0]
	if old.term != 1 {
		t.Fatalf("the held pass began in term %d, want 1", old.term)
	}
	for _, p := range runs[1:] {
		if p.began.Before(old.ended) {
			t.Errorf("a pass of term %d began at %v, before the first term's pass ended at %v",
				p.term, p.began.Format(time.StampMicro), old.ended.Format(time.StampMicro))
		}
	}
	var notLeader *leader.NotLeaderError
	if !errors.As(old.patchErr, &notLeader) {
		t.Errorf("the first term's handler wrote after its term ended (the replica leading again in term %d): patch returned %v, want a *leader.NotLeaderError", terms, old.patchErr)
	}
	cm, err := controlplanetest.Clientset(cp.Config()).CoreV1().ConfigMaps(ns).Get(t.Context(), "stuck", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := cm.Data["stale"]; ok {
		t.Errorf("the first term's write landed: data %v", cm.Data)
	}
	if last := runs[len(runs)-1]; last.patchErr != nil {
		t.Errorf("the second term's pass could not write: %v", last.patchErr)
	}
}
