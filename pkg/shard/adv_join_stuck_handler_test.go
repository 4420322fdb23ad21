package shard_test

import (
	"context"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/generic"
	"github.com/lariat-dev/lariat/pkg/leader"
	"github.com/lariat-dev/lariat/pkg/shard"
)

// joinRun is one handler run of a Join's terms.
type joinRun struct {
	term         int // 1 for the first term
	began, ended time.Time
}

// TestAdvJoinsNextTermNeverRunsAKeyBesideTheLostTermsHandler (adversary,
// issue 24): a member's handler outlives its lost term and the stop grace
// period (its Lease is left to expire). Join runs the next term at once,
// under a new ID, with a new factory in the same process; once the old
// Lease expired the object is moved to the new ID (as the sharder does).
// The new term must not run the object's handler while the old term's
// handler for it still runs: one process, two handlers for one object.
func TestAdvJoinsNextTermNeverRunsAKeyBesideTheLostTermsHandler(t *testing.T) {
	advJoinStuck(t, false)
}

// TestAdvJoinsNextTermNeverRunsAKeyBesideTheLostTermsDeletion (adversary,
// issue 24): the same with the lost term's handler stuck in the deletion
// of the object, which is then created again under the same name and
// assigned to the next term: the new object's handler must not run while
// the old one's deletion (which may clean up what is named after it) still
// runs.
func TestAdvJoinsNextTermNeverRunsAKeyBesideTheLostTermsDeletion(t *testing.T) {
	advJoinStuck(t, true)
}

// advJoinStuck runs the scenario with the lost term's handler held in a
// pass over the object (deletion: in the pass of its deletion).
func advJoinStuck(t *testing.T, deletion bool) {
	ns := controlplanetest.Namespace(t, cp().Config())
	kube := controlplanetest.Clientset(cp().Config())
	key := ns + "/stuck"
	leaseProx, leaseCfg := controlplanetest.NewProxy(t, cp().Config())
	leaseCfg.Timeout = renewDeadline

	var (
		mu        sync.Mutex
		ids       []string // each term's member ID
		runs      []*joinRun
		returned  int // term functions returned
		seen      int // passes over the object
		newBegan  = make(chan struct{})
		release   = make(chan struct{})
		beganOnce sync.Once
		relOnce   sync.Once
		firstOnce sync.Once
		first     = make(chan struct{})
	)
	defer relOnce.Do(func() { close(release) })
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- shard.Join(ctx, kubernetes.NewForConfigOrDie(leaseCfg).CoordinationV1(), testRing(ns), func(ctx context.Context, m *shard.Member) error {
			defer func() {
				mu.Lock()
				returned++
				mu.Unlock()
			}()
			mu.Lock()
			ids = append(ids, m.ID())
			term := len(ids)
			mu.Unlock()
			f, err := generic.NewFactoryFromConfig(m.Fence(cp().Config()), nil, m.FactoryOptions(cp().Config(), &generic.FactoryOptions{
				Cache:      cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns}, SyncTimeout: time.Minute},
				Controller: controller.SharedControllerFactoryOptions{Logger: controlplanetest.QuietLogger(), StopGrace: time.Second},
			}))
			if err != nil {
				return err
			}
			cms, err := generic.NewController[*corev1.ConfigMap, *corev1.ConfigMapList](configMapGVK, "configmaps", true, f.ControllerFactory())
			if err != nil {
				return err
			}
			cms.OnChange(ctx, "stuck", func(k string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
				if k != key {
					return nil, nil
				}
				mu.Lock()
				seen++
				mu.Unlock()
				// The subject: the first term's pass over the object (of
				// its deletion, with deletion), later terms' over a copy.
				if (term == 1 && (cm == nil) != deletion) || (term != 1 && cm == nil) {
					return nil, nil
				}
				r := &joinRun{term: term, began: time.Now()}
				mu.Lock()
				runs = append(runs, r)
				mu.Unlock()
				if term == 1 {
					// Held past the term until the test lets go, or until
					// a later term's handler for the key begins: the
					// overlap the test looks for.
					firstOnce.Do(func() { close(first) })
					select {
					case <-release:
					case <-newBegan:
					}
				} else {
					beganOnce.Do(func() { close(newBegan) })
				}
				mu.Lock()
				r.ended = time.Now()
				mu.Unlock()
				return nil, nil
			})
			return f.Run(ctx, 2)
		}, leader.WithIdentity("joiner"), leader.WithLeaseDuration(leaseDuration), leader.WithRenewDeadline(renewDeadline),
			leader.WithRetryPeriod(retryPeriod), leader.WithLogger(controlplanetest.QuietLogger()))
	}()
	t.Cleanup(func() {
		leaseProx.Restore()
		relOnce.Do(func() { close(release) })
		cancel()
		<-done
	})
	termID := func(n int) string {
		mu.Lock()
		defer mu.Unlock()
		if len(ids) < n {
			return ""
		}
		return ids[n-1]
	}
	eventually(t, "the first term", func() bool { return termID(1) != "" })
	createCM(t, ns, "stuck", termID(1))
	if deletion {
		eventually(t, "the first term handling the object", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return seen > 0
		})
		if err := kube.CoreV1().ConfigMaps(ns).Delete(t.Context(), "stuck", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-first:
	case <-time.After(timeout):
		t.Fatal("the first term never handled the object")
	}
	oldID := termID(1)

	leaseProx.Cut()
	eventually(t, "the first term's function returning (its handler past the grace)", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return returned == 1
	})
	leaseProx.Restore()
	eventually(t, "a second term", func() bool { return termID(2) != "" })
	// The sharder moves a member's objects once its Lease has expired.
	eventually(t, "the first term's Lease expired", func() bool {
		l, err := kube.CoordinationV1().Leases(ns).Get(t.Context(), shard.MemberLeaseName(ringName, oldID), metav1.GetOptions{})
		if err != nil {
			return true
		}
		return l.Spec.RenewTime == nil || time.Since(l.Spec.RenewTime.Time) > leaseDuration+time.Second
	})
	if deletion {
		createCM(t, ns, "stuck", termID(2)) // created again, on the new ID
	} else {
		label(t, ns, "stuck", termID(2), false)
	}
	// With the object on the new ID, the new term either runs it (cutting
	// the held handler short) or waits for it; the held handler is let go
	// a few lease durations later, time enough for the new term to see the
	// object even on a loaded machine.
	select {
	case <-newBegan:
	case <-time.After(3 * leaseDuration):
		relOnce.Do(func() { close(release) })
	}
	eventually(t, "the second term handling the object", func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, r := range runs {
			if r.term == 2 && !r.ended.IsZero() {
				return true
			}
		}
		return false
	})
	mu.Lock()
	defer mu.Unlock()
	old := runs[0]
	for _, r := range runs {
		t.Logf("term %d's run: %v to %v", r.term, r.began.Format(time.StampMicro), r.ended.Format(time.StampMicro))
	}
	for _, r := range runs[1:] {
		if r.term != 1 && r.began.Before(old.ended) {
			t.Errorf("term %d's handler for %s began at %v, before the lost term's handler for it returned at %v (%v of overlap in one process)",
				r.term, key, r.began.Format(time.StampMicro), old.ended.Format(time.StampMicro), old.ended.Sub(r.began))
		}
	}
}
