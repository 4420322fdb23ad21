package kvscheduler_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
	clocktesting "k8s.io/utils/clock/testing"
)

// arrayItems derives "<key>/<item>" from a base "<prefix><name>" holding
// comma-separated items (the reference's test.ArrayValueDerBuilder).
func arrayItems(key string, v any) []kvscheduler.KeyValuePair {
	if strings.Count(key, "/") > 1 {
		return nil
	}
	var out []kvscheduler.KeyValuePair
	for _, item := range strings.Split(v.(string), ",") {
		if item != "" {
			out = append(out, kvscheduler.KeyValuePair{Key: key + "/" + item, Value: item})
		}
	}
	return out
}

// sideEffectSB makes the next create of "b/2/item2" that it is told to
// fail also shrink its base to "item1" in the southbound, as the
// reference's planned error of TestNotificationsWithRetry does.
type sideEffectSB struct {
	*kvtest.Southbound
	mu    sync.Mutex
	fails int
}

func (sb *sideEffectSB) failItem2WithSideEffect() {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	sb.fails++
}

// notifiedArrays is the reference's setup of TestNotificationsWithRetry:
// "a/" values without Retrieve (known from notifications), "b/" values
// (whose descriptor claims their derived items, and reads back base
// values only); b/2 depends on a/1, b/2/item2 on a/1/item2.
func notifiedArrays() (*sideEffectSB, []*kvscheduler.Descriptor) {
	sb := &sideEffectSB{Southbound: kvtest.New()}
	a := sb.Descriptor("a", "a/")
	a.Retrieve, a.RetrieveKeys, a.DerivedValues = nil, nil, arrayItems
	b := arrayDescriptor(sb.Southbound, "b", "b/")
	b.Dependencies = func(key string, _ any) []kvscheduler.Dependency {
		switch key {
		case "b/2":
			return []kvscheduler.Dependency{{Key: "a/1"}}
		case "b/2/item2":
			return []kvscheduler.Dependency{{Key: "a/1/item2"}}
		}
		return nil
	}
	create := b.Create
	b.Create = func(ctx context.Context, key string, v any) (any, error) {
		sb.mu.Lock()
		fail := key == "b/2/item2" && sb.fails > 0
		if fail {
			sb.fails--
		}
		sb.mu.Unlock()
		if fail {
			sb.Set("b/2", "item1", false)
			sb.FailNext("create", key, errors.New("failed to add derived value"))
		}
		return create(ctx, key, v)
	}
	return sb, []*kvscheduler.Descriptor{a, b}
}

func wantBelieved(t *testing.T, s *kvscheduler.Scheduler, key string, want any) {
	t.Helper()
	kv, ok := dump(s, kvscheduler.SBView, key)
	if !ok || kv.Value != want {
		t.Errorf("the scheduler believes %s holds %v (%v), the southbound holds %v", key, kv.Value, ok, want)
	}
}

// Issue 25, case 3: after a failure in a transaction started by a
// southbound notification, the failed value's base is read back, so that
// the retry starts from what the southbound holds. Mirrors the reference's
// TestNotificationsWithRetry (notification_test.go): the failed create of
// b/2/item2 leaves its base holding [item1]; the retry updates the base
// back to [item1, item2] and creates the item.
func TestNotificationFailureIsReadBack(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	s := newSched(t, kvscheduler.Options{Clock: clk, HistoryTrimPeriod: time.Hour})
	sb, ds := notifiedArrays()
	register(t, s, ds...)
	_, err := s.StartNBTransaction().SetValue("b/2", "item1,item2").
		WithRetry(kvscheduler.RetryOptions{Period: time.Second, MaxAttempts: 3}).Commit(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	wantState(t, s, "b/2", kvscheduler.Pending)
	sb.failItem2WithSideEffect()
	if err := s.PushSBNotification("a/1", "item1,item2", nil); err != nil {
		t.Fatal(err)
	}
	barrier(t, s)
	wantOps(t, sb.Southbound, "create b/2", "create b/2/item1", "create b/2/item2")
	wantState(t, s, "b/2/item2", kvscheduler.Retrying)
	wantBelieved(t, s, "b/2", "item1")

	clk.Step(time.Second)
	eventually(t, "the retry", func() bool { return retries(s) == 1 })
	wantOps(t, sb.Southbound, "update b/2", "create b/2/item2")
	wantSB(t, sb.Southbound, map[string]any{"b/2": "item1,item2", "b/2/item1": "item1", "b/2/item2": "item2"})
	for _, k := range []string{"b/2", "b/2/item1", "b/2/item2"} {
		wantState(t, s, k, kvscheduler.Configured)
	}
}

// Issue 25, case 3: the same after a failure in a retry: the retry after
// it works from what the southbound holds.
func TestRetryFailureIsReadBack(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	s := newSched(t, kvscheduler.Options{Clock: clk, HistoryTrimPeriod: time.Hour})
	sb, ds := notifiedArrays()
	register(t, s, ds...)
	if err := s.PushSBNotification("a/1", "item1,item2", nil); err != nil {
		t.Fatal(err)
	}
	sb.FailNext("create", "b/2/item2", errors.New("busy"))
	_, err := s.StartNBTransaction().SetValue("b/2", "item1,item2").
		WithRetry(kvscheduler.RetryOptions{Period: time.Second, MaxAttempts: 3}).Commit(context.Background())
	if err == nil {
		t.Fatal("no error")
	}
	wantOps(t, sb.Southbound, "create b/2", "create b/2/item1", "create b/2/item2")
	sb.failItem2WithSideEffect()
	clk.Step(time.Second)
	eventually(t, "the first retry", func() bool { return retries(s) == 1 })
	wantOps(t, sb.Southbound, "create b/2/item2")
	wantState(t, s, "b/2/item2", kvscheduler.Retrying)
	wantBelieved(t, s, "b/2", "item1")

	clk.Step(time.Second)
	eventually(t, "the second retry", func() bool { return retries(s) == 2 })
	wantOps(t, sb.Southbound, "update b/2", "create b/2/item2")
	wantSB(t, sb.Southbound, map[string]any{"b/2": "item1,item2", "b/2/item1": "item1", "b/2/item2": "item2"})
	for _, k := range []string{"b/2", "b/2/item1", "b/2/item2"} {
		wantState(t, s, k, kvscheduler.Configured)
	}
}
