package dependents_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/internal/dependentstest"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// TestAdv7LeaderTermEndsOnlyAfterItsDependentsHandlerReturned: two
// replicas under leader election, each with a dependents registration made
// in its term (dependents.Register with the term's context, as
// docs/dependents.md says: "Everything the registration started stops
// when its context ends") and the term function docs/replicas.md gives:
// "return f.Run(ctx, 2) ... It must return only once its work has
// stopped, because the lease is released as soon as it returns". DESIGN.md
// (Replicas): "A replica's term ends only after every handler, event-loop
// handler and scheduler callback it started has returned; only then is its
// Lease released." The first leader's dependents handler for an owner is
// busy when its term ends (a clean stop: a rolling upgrade). f.Run waits
// for the factory's workers, not for the registration's event loop: the
// Lease is released while the loop's handler still runs, the second
// replica leads and its own loop runs the handler for the same owner
// beside it.
func TestAdv7LeaderTermEndsOnlyAfterItsDependentsHandlerReturned(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	var busy [2]atomic.Bool
	var overlapped atomic.Bool
	entered := make(chan struct{}, 1)
	secondRan := make(chan struct{})
	var secondOnce sync.Once
	handler := func(replica int) dependents.Handler[*demov1.WebApp] {
		return func(app *demov1.WebApp) ([]*dependents.Object, error) {
			if app.Name != "busy" {
				return nil, nil
			}
			busy[replica].Store(true)
			defer busy[replica].Store(false)
			if busy[1-replica].Load() {
				overlapped.Store(true)
			}
			if replica == 1 {
				secondOnce.Do(func() { close(secondRan) })
				return nil, nil
			}
			select {
			case entered <- struct{}{}:
			default:
			}
			// Slow work, well within any stop grace: it returns when the
			// second replica's handler ran, or after 5 s.
			select {
			case <-secondRan:
			case <-time.After(5 * time.Second):
			}
			return nil, nil
		}
	}
	opts := []leader.Option{leader.WithLeaseDuration(2 * time.Second), leader.WithRenewDeadline(time.Second),
		leader.WithRetryPeriod(250 * time.Millisecond), leader.WithLogger(controlplanetest.QuietLogger())}
	kube := kubernetes.NewForConfigOrDie(cp.Config())
	var leads [2]atomic.Int32
	start := func(replica int, identity string) (cancel func(), done <-chan error) {
		e, err := leader.New(kube.CoordinationV1(), ns, "adv7-deps", append(opts, leader.WithIdentity(identity))...)
		if err != nil {
			t.Fatal(err)
		}
		f, webapps := dependentstest.Factory(t, e.Fence(cp.Config()), e.FactoryOptions(nil))
		ctx, stop := context.WithCancel(t.Context())
		ch, finished := make(chan error, 1), make(chan struct{})
		t.Cleanup(func() {
			stop()
			select {
			case <-finished:
			case <-time.After(wait):
				t.Errorf("%s: Run did not return", identity)
			}
		})
		go func() {
			defer close(finished)
			ch <- e.Run(ctx, func(ctx context.Context) error {
				leads[replica].Add(1)
				_, err := dependents.Register(ctx, f, webapps, dependentstest.WebAppStatus(), "adv7-term", handler(replica),
					dependents.Options{FieldManager: "adv7-term", Kinds: kinds, Logger: controlplanetest.QuietLogger(), StopTimeout: 2 * time.Minute})
				if err != nil {
					return err
				}
				return f.Run(ctx, 2)
			})
		}()
		return stop, ch
	}
	stopFirst, firstDone := start(0, "first")
	controlplanetest.Eventually(t, wait, "first leading", func() bool { return leads[0].Load() == 1 })
	start(1, "second")
	_, webapps := dependentstest.Factory(t, cp.Config(), nil)
	advCreateApp(t, webapps, ns, "busy", nil)
	select {
	case <-entered:
	case <-time.After(wait):
		t.Fatal("the first leader's dependents handler never ran for the owner")
	}

	stopFirst()
	select {
	case err := <-firstDone:
		if err != nil {
			t.Fatalf("first: %v", err)
		}
	case <-time.After(wait):
		t.Fatal("the first leader's Run did not return")
	}
	select {
	case <-secondRan:
	case <-time.After(wait):
		t.Fatal("the second leader's dependents handler never ran for the owner")
	}
	if overlapped.Load() {
		t.Fatalf("the second leader's dependents handler ran for the owner while the first leader's, begun in its term, still ran: " +
			"the first's Run returned and released the Lease before its term's event-loop handler returned")
	}
}
