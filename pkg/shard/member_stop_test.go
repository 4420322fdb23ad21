package shard_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/generic"
	"github.com/lariat-dev/lariat/pkg/leader"
	"github.com/lariat-dev/lariat/pkg/shard"
)

// memberTermFunction is the term function of a member as docs/replicas.md
// shows it.
func memberTermFunction(ctx context.Context, f *generic.Factory) error {
	return f.Run(ctx, 2)
}

// TestMemberLeaseGoesOnlyAfterItsHandlersReturned: a member's context ends
// while its handler for an object runs (a 3 s handler); the member Lease,
// whose release or deletion lets the sharder move the object at once, is
// given up only after that handler returned.
func TestMemberLeaseGoesOnlyAfterItsHandlersReturned(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp().Config())
	kube := kubernetes.NewForConfigOrDie(cp().Config())
	ring := testRing(ns)
	m, err := shard.NewMember(kube.CoordinationV1(), ring, leader.WithLeaseDuration(leaseDuration), leader.WithRenewDeadline(renewDeadline),
		leader.WithRetryPeriod(retryPeriod), leader.WithLogger(controlplanetest.QuietLogger()))
	if err != nil {
		t.Fatal(err)
	}
	leaseName := shard.MemberLeaseName(ring.Name, m.ID())

	// The Lease is given up when it is released (no holder) or deleted;
	// a watch records when that was seen, which is no earlier than when
	// it happened.
	w, err := kube.CoordinationV1().Leases(ns).Watch(t.Context(), metav1.ListOptions{FieldSelector: "metadata.name=" + leaseName})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	givenUp := make(chan time.Time, 1)
	go func() {
		for ev := range w.ResultChan() {
			l, ok := ev.Object.(*coordinationv1.Lease)
			if !ok {
				continue
			}
			if ev.Type == watch.Deleted || (ev.Type == watch.Modified && (l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "")) {
				if ev.Type == watch.Modified && l.Labels[shard.ReleaseProofLabel] == "" {
					// Without it the sharder takes the release for an
					// edit by hand and waits out the lease (release_proof.go).
					t.Errorf("the member's release carries no %s: %v", shard.ReleaseProofLabel, l.Labels)
				}
				givenUp <- time.Now()
				return
			}
		}
	}()

	f, err := generic.NewFactoryFromConfig(m.Fence(cp().Config()), nil, m.FactoryOptions(cp().Config(), &generic.FactoryOptions{
		Cache:      cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns}, SyncTimeout: time.Minute},
		Controller: controller.SharedControllerFactoryOptions{Logger: controlplanetest.QuietLogger()},
	}))
	if err != nil {
		t.Fatal(err)
	}
	cms, err := generic.NewController[*corev1.ConfigMap, *corev1.ConfigMapList](configMapGVK, "configmaps", true, f.ControllerFactory())
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var ended time.Time
	began := make(chan struct{})
	var once sync.Once
	// The handler takes 3 s, or less once the Lease was given up: that
	// is the overlap the test looks for.
	cms.OnChange(t.Context(), "slow", func(_ string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
		if cm == nil {
			return nil, nil
		}
		once.Do(func() { close(began) })
		select {
		case <-time.After(3 * time.Second):
		case at := <-givenUp:
			givenUp <- at
		}
		mu.Lock()
		ended = time.Now()
		mu.Unlock()
		return nil, nil
	})
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "slow", Labels: map[string]string{shard.AssignmentLabel(ring.Name): m.ID()}}}
	if _, err := kube.CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- m.Run(ctx, func(ctx context.Context) error { return memberTermFunction(ctx, f) })
	}()
	<-began
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	var at time.Time
	select {
	case at = <-givenUp:
	case <-time.After(timeout):
		t.Fatal("the member Lease was neither released nor deleted after Run returned")
	}
	mu.Lock()
	end := ended
	mu.Unlock()
	if end.IsZero() {
		t.Fatal("Run returned before the handler did")
	}
	if at.Before(end) {
		t.Errorf("the member Lease was given up (seen at %v) before the handler returned at %v", at.Format(time.StampMicro), end.Format(time.StampMicro))
	}
}

// TestMemberHandlerOutlivingTheGraceKeepsTheLease: a handler still running
// once the stop grace period after its term's end has passed keeps the
// member Lease: Run returns an error naming it, and the Lease is neither
// released nor deleted, so the sharder moves the object only once it
// expired.
func TestMemberHandlerOutlivingTheGraceKeepsTheLease(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp().Config())
	kube := kubernetes.NewForConfigOrDie(cp().Config())
	ring := testRing(ns)
	m, err := shard.NewMember(kube.CoordinationV1(), ring, leader.WithLeaseDuration(leaseDuration), leader.WithRenewDeadline(renewDeadline),
		leader.WithRetryPeriod(retryPeriod), leader.WithLogger(controlplanetest.QuietLogger()))
	if err != nil {
		t.Fatal(err)
	}
	f, err := generic.NewFactoryFromConfig(m.Fence(cp().Config()), nil, m.FactoryOptions(cp().Config(), &generic.FactoryOptions{
		Cache:      cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns}, SyncTimeout: time.Minute},
		Controller: controller.SharedControllerFactoryOptions{Logger: controlplanetest.QuietLogger(), StopGrace: time.Second},
	}))
	if err != nil {
		t.Fatal(err)
	}
	cms, err := generic.NewController[*corev1.ConfigMap, *corev1.ConfigMapList](configMapGVK, "configmaps", true, f.ControllerFactory())
	if err != nil {
		t.Fatal(err)
	}
	began, release := make(chan struct{}), make(chan struct{})
	defer close(release)
	var once sync.Once
	cms.OnChange(t.Context(), "stuck", func(_ string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
		if cm != nil {
			once.Do(func() { close(began) })
			<-release
		}
		return nil, nil
	})
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "stuck", Labels: map[string]string{shard.AssignmentLabel(ring.Name): m.ID()}}}
	if _, err := kube.CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- m.Run(ctx, func(ctx context.Context) error { return memberTermFunction(ctx, f) })
	}()
	<-began
	cancel()
	err = <-done
	var still *controller.StillRunningError
	if !errors.As(err, &still) || len(still.Handlers) != 1 || still.Handlers[0].Key != ns+"/stuck" || still.Handlers[0].Handler != "stuck" {
		t.Fatalf("Run: %v, want a *controller.StillRunningError naming the handler", err)
	}
	lease, err := kube.CoordinationV1().Leases(ns).Get(t.Context(), shard.MemberLeaseName(ring.Name, m.ID()), metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the member Lease is gone while a handler still runs: %v", err)
	}
	if h := lease.Spec.HolderIdentity; h == nil || *h != m.Identity() {
		t.Errorf("the member Lease was released while a handler still runs (holder %v)", h)
	}
}
