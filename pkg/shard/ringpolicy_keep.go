package shard

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
)

// Keeping the ring guard. The sharder installs the guard before it
// campaigns (SharderOptions.RingPolicy), but the policy and its binding
// are cluster-scoped objects anyone with the rights can delete or edit (a
// cleanup of objects no manifest lists, an uninstall of another release's
// policies, kubectl edit): the guard would then refuse nothing until the
// sharder restarted. So the elected sharder watches both objects, by name,
// and applies the guard again (its whole spec, then the probe) whenever
// either is deleted or changed.
//
// It applies it again rather than holding its assignments until the guard
// is back: the guard keeps users' writes of the ring's labels and trail
// out, and those act through the members' gates as much as through the
// sharder, so a held sharder would not close the window; it would only
// leave new objects unassigned and dead members' objects where they are,
// and stall the ring for as long as the admission API is unwritable. A
// write sent between the deletion and the re-application (about one watch
// event and a few requests) is admitted: see docs/safety.md, "Not yet
// guaranteed".

// guardInstall is what the sharder's Run installed: the resources of the
// ring's kinds and the options, to install it again with.
type guardInstall struct {
	resources []schema.GroupVersionResource
	o         RingPolicyOptions
}

// checkGuardWatch lists the ring guard's two objects once, so that a
// sharder whose RBAC lets it install the guard but not watch it says so
// from Run, before it campaigns, instead of keeping a guard it cannot see.
func (s *Sharder) checkGuardWatch(ctx context.Context) error {
	sel := fields.OneTermEqualSelector("metadata.name", RingPolicyName(s.ring)).String()
	c := s.kube.AdmissionregistrationV1()
	_, err := c.ValidatingAdmissionPolicies().List(ctx, metav1.ListOptions{FieldSelector: sel, Limit: 1})
	if err == nil {
		_, err = c.ValidatingAdmissionPolicyBindings().List(ctx, metav1.ListOptions{FieldSelector: sel, Limit: 1})
	}
	switch {
	case apierrors.IsForbidden(err):
		return fmt.Errorf("shard: ring %s: watch the ring guard %s: the sharder needs list and watch on validatingadmissionpolicies and validatingadmissionpolicybindings (admissionregistration.k8s.io, cluster-scoped), to apply it again when it is deleted or changed: %w",
			s.ring.Name, RingPolicyName(s.ring), err)
	case err != nil:
		return fmt.Errorf("shard: ring %s: watch the ring guard %s: %w", s.ring.Name, RingPolicyName(s.ring), err)
	}
	return nil
}

// keepRingGuard applies the ring guard again, until ctx ends, each time
// its policy or binding is deleted or changed (and once when the watch
// starts, for a change made while no sharder watched).
func (t *term) keepRingGuard(ctx context.Context, g *guardInstall) {
	s := t.s
	name := RingPolicyName(s.ring)
	kick := make(chan struct{}, 1)
	var changed atomic.Bool // an event other than the first sight: logged
	notify := func(change bool) {
		if change {
			changed.Store(true)
		}
		select {
		case kick <- struct{}{}:
		default:
		}
	}
	c := s.kube.AdmissionregistrationV1().RESTClient()
	sel := func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("metadata.name", name).String()
	}
	var infs []cache.SharedIndexInformer
	for _, w := range []struct {
		resource string
		obj      runtime.Object
	}{{"validatingadmissionpolicies", &admissionv1.ValidatingAdmissionPolicy{}}, {"validatingadmissionpolicybindings", &admissionv1.ValidatingAdmissionPolicyBinding{}}} {
		inf := cache.NewSharedIndexInformer(cache.NewFilteredListWatchFromClient(c, w.resource, "", sel), w.obj, 0, cache.Indexers{})
		_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { notify(false) },
			UpdateFunc: func(any, any) { notify(true) },
			DeleteFunc: func(any) { notify(true) },
		})
		_ = inf.SetWatchErrorHandlerWithContext(func(ctx context.Context, r *cache.Reflector, err error) {
			if ctx.Err() == nil {
				s.log.Warnf("shard: ring %s: cannot watch the ring guard's %s %s, a deletion or edit of it goes unrepaired meanwhile: %v", s.ring.Name, w.resource, name, err)
			}
		})
		infs = append(infs, inf)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	for _, inf := range infs {
		wg.Go(func() { inf.RunWithContext(ctx) })
	}
	if !cache.WaitForCacheSync(ctx.Done(), infs[0].HasSynced, infs[1].HasSynced) {
		return
	}
	notify(false) // an object missing from the first list sends no event
	backoff := s.o.RetryPeriod
	for {
		select {
		case <-ctx.Done():
			return
		case <-kick:
		}
		was := changed.Swap(false)
		if err := installRingPolicy(ctx, s.kube, s.ring, g.resources, g.o); err != nil {
			if ctx.Err() != nil {
				return
			}
			changed.Store(was)
			s.log.Warnf("shard: ring %s: cannot apply the ring guard %s again, retrying in %v: %v", s.ring.Name, name, backoff, err)
			if !sleepCtx(ctx, backoff) {
				return
			}
			backoff = min(2*backoff, time.Minute)
			notify(false)
			continue
		}
		backoff = s.o.RetryPeriod
		if was {
			s.log.Infof("shard: ring %s: the ring guard %s was deleted or changed; applied it again", s.ring.Name, name)
		}
	}
}

// sleepCtx waits d, or until ctx ends (false).
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
