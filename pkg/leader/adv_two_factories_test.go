package leader_test

import (
	"context"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// TestAdvAnotherFactorysPassMovesTheHandlersPrecondition: two factories of
// one process run under one Elector (two components of an operator, or a
// factory per group), both built with its Fence and FactoryOptions, and
// both handle ConfigMap "shared". The first factory's handler is given the
// object at version 1 and is slow. Someone else changes the object
// (version 2); the second factory handles version 2. The Elector keeps one
// resourceVersion per object for every pass under way, and the second
// pass replaced the first one's: the first handler's write, documented as
// "conditional on the copy the handler was given", is conditional on
// version 2 and lands over the change its handler never saw, instead of
// failing with a conflict.
func TestAdvAnotherFactorysPassMovesTheHandlersPrecondition(t *testing.T) {
	cfg := cp.Config()
	kube := controlplanetest.Clientset(cfg)
	ns := controlplanetest.Namespace(t, cfg)
	ctx := t.Context()
	e, err := leader.New(kube.CoordinationV1(), ns, "two-factories", leader.WithIdentity("a"),
		leader.WithLeaseDuration(leaseDuration), leader.WithRenewDeadline(renewDeadline), leader.WithRetryPeriod(retryPeriod),
		leader.WithLogger(controlplanetest.QuietLogger()))
	if err != nil {
		t.Fatal(err)
	}
	fenced := e.Fence(cfg)
	slow, slowCMs := fencedConfigMaps(t, e, fenced, ns)
	other, otherCMs := fencedConfigMaps(t, e, fenced, ns)
	writes := kubernetes.NewForConfigOrDie(fenced).CoreV1().ConfigMaps(ns)

	given := make(chan string, 1)
	proceed := make(chan struct{})
	var proceedOnce sync.Once
	t.Cleanup(func() { proceedOnce.Do(func() { close(proceed) }) })
	result := make(chan error, 1)
	var once sync.Once
	slowCMs.OnChange(ctx, "slow-writer", func(_ string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
		first := false
		once.Do(func() { first = true })
		if cm == nil || !first {
			return cm, nil
		}
		given <- cm.ResourceVersion
		<-proceed
		_, err := writes.Patch(context.Background(), cm.Name, types.MergePatchType, []byte(`{"data":{"by":"slow handler"}}`), metav1.PatchOptions{})
		result <- err
		return cm, nil
	})
	var mu sync.Mutex
	seen := map[string]bool{} // resourceVersions the other factory's handler was given
	otherCMs.OnChange(ctx, "reader", func(_ string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
		if cm != nil {
			mu.Lock()
			seen[cm.ResourceVersion] = true
			mu.Unlock()
		}
		return cm, nil
	})
	controlplanetest.Run(t, func(ctx context.Context) error {
		return e.Run(ctx, func(ctx context.Context) error {
			if err := slow.Start(ctx, 1); err != nil {
				return err
			}
			if err := other.Start(ctx, 1); err != nil {
				return err
			}
			<-ctx.Done()
			err := slow.Wait(context.WithoutCancel(ctx))
			if err2 := other.Wait(context.WithoutCancel(ctx)); err == nil {
				err = err2
			}
			return err
		})
	})
	controlplanetest.Eventually(t, timeout, "A leads", e.Holding)

	if _, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "shared"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var v1 string
	select {
	case v1 = <-given:
	case <-time.After(timeout):
		t.Fatal("the slow handler never ran")
	}
	changed, err := kube.CoreV1().ConfigMaps(ns).Patch(ctx, "shared", types.MergePatchType, []byte(`{"data":{"by":"someone else"}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, timeout, "the other factory handles version 2", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return seen[changed.ResourceVersion]
	})
	proceedOnce.Do(func() { close(proceed) })
	err = <-result
	if !apierrors.IsConflict(err) {
		cm, _ := kube.CoreV1().ConfigMaps(ns).Get(ctx, "shared", metav1.GetOptions{})
		t.Fatalf("the slow handler, given version %s, wrote after the object changed to %s (handled by the other factory meanwhile): its write returned %v instead of a conflict, and overwrote the change (data %v, resourceVersion %s)",
			v1, changed.ResourceVersion, err, cm.Data, cm.ResourceVersion)
	}
}
