package kvscheduler_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
	clocktesting "k8s.io/utils/clock/testing"
)

// boxed is a comparable type whose values may hold uncomparable ones:
// comparing two of them with == panics.
type boxed struct{ V any }

// A value of a comparable type holding an uncomparable one, applied twice,
// must not crash the scheduler (the check of "the same value as before"
// compared it with ==).
func TestUncomparableDynamicValueApplied(t *testing.T) {
	sb := kvtest.New()
	s := newSched(t, kvscheduler.Options{})
	d := sb.Descriptor("d", "d/")
	d.Dependencies = func(string, any) []kvscheduler.Dependency { return nil }
	d.DerivedValues = func(string, any) []kvscheduler.KeyValuePair { return nil }
	register(t, s, d)
	mustSet(t, s, "d/a", boxed{V: []int{1}})
	mustSet(t, s, "d/a", boxed{V: []int{1}})
	mustSet(t, s, "d/a", boxed{V: []int{2}})
	wantState(t, s, "d/a", kvscheduler.Configured)
}

// A delete that keeps waiting for a dependent whose own delete keeps
// failing is recorded once, however often it is attempted again.
func TestWaitingDeleteRecordedOnce(t *testing.T) {
	sb := kvtest.New()
	s := newSched(t, kvscheduler.Options{})
	register(t, s, withDeps(sb.Descriptor("d", "d/")))
	mustSet(t, s, "d/a", "a|d/b", "d/b", "b")
	for i := 0; i < 10; i++ {
		sb.FailNext("delete", "d/a", errors.New("boom"))
		txn := s.StartNBTransaction().SetValue("d/a", nil).SetValue("d/b", nil)
		if i > 0 {
			txn.WithResync(kvscheduler.DownstreamResync)
		}
		_, _ = txn.Commit(context.Background())
		wantState(t, s, "d/b", kvscheduler.Failed)
	}
	if n := kvscheduler.WaitingDeletes(s); n != 1 {
		t.Fatalf("%d waiting deletes recorded, want 1", n)
	}
}

// A value whose update failed keeps, in the southbound, the dependencies
// of its old value: what satisfies them is not deleted under it, whether
// the dependency is given by key prefix or by key selector.
func TestFailedUpdateKeepsSBDependency(t *testing.T) {
	for _, sel := range []bool{false, true} {
		t.Run(map[bool]string{false: "prefix", true: "selector"}[sel], func(t *testing.T) {
			sb := kvtest.New()
			s := newSched(t, kvscheduler.Options{})
			d := sb.Descriptor("d", "d/")
			d.Dependencies = func(_ string, v any) []kvscheduler.Dependency {
				if !strings.HasSuffix(v.(string), "|p") {
					return nil
				}
				any := kvscheduler.AnyOfDependency{KeyPrefixes: []string{"d/p"}}
				if sel {
					any = kvscheduler.AnyOfDependency{KeySelector: func(k string) bool { return strings.HasPrefix(k, "d/p") }}
				}
				return []kvscheduler.Dependency{{Label: "p", AnyOf: any}}
			}
			register(t, s, d)
			mustSet(t, s, "d/p", "p", "d/m", "m|p")
			sb.FailNext("update", "d/m", errors.New("boom"))
			_ = set(t, s, "d/m", "m")
			wantState(t, s, "d/m", kvscheduler.Failed)
			_ = set(t, s, "d/p", nil)
			if _, ok := sb.Values()["d/p"]; !ok {
				t.Fatalf("d/p deleted while d/m, whose value in the southbound needs it, exists (status %+v)", s.GetValueStatus("d/p"))
			}
		})
	}
}

// derivingEachOther returns a scheduler whose values d/a and d/b derive
// each other (a descriptor bug), with d/a set.
func derivingEachOther(t *testing.T) (*kvscheduler.Scheduler, *kvtest.Southbound) {
	t.Helper()
	sb := kvtest.New()
	s := newSched(t, kvscheduler.Options{CloseTimeout: time.Second})
	d := sb.Descriptor("d", "d/")
	d.DerivedValues = func(key string, v any) []kvscheduler.KeyValuePair {
		if key == "d/a" {
			return []kvscheduler.KeyValuePair{{Key: "d/b", Value: v}}
		}
		return []kvscheduler.KeyValuePair{{Key: "d/a", Value: v}}
	}
	register(t, s, d)
	_ = set(t, s, "d/a", "x")
	return s, sb
}

// Derived values that derive each other (a descriptor bug) cost a bounded
// walk, in a resync's read-back too: the resync ends.
func TestDerivedCycleResyncEnds(t *testing.T) {
	s, _ := derivingEachOther(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).Commit(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatal("the resync did not end")
	}
}

// Derived values that derive each other and vanish from the southbound
// are read back as gone without exhausting the worker's stack.
func TestDerivedCycleGone(t *testing.T) {
	s, sb := derivingEachOther(t)
	sb.Remove("d/a")
	sb.Remove("d/b")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).Commit(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatal("the resync did not end")
	}
}

// Descriptor callbacks that panic outside operations (key selectors of
// the descriptor and of its dependencies, key labels) fail values, not
// the process.
func TestPanickingSelectorsDoNotCrash(t *testing.T) {
	t.Run("dependency selector", func(t *testing.T) {
		sb := kvtest.New()
		s := newSched(t, kvscheduler.Options{})
		d := sb.Descriptor("d", "d/")
		d.Dependencies = func(_ string, v any) []kvscheduler.Dependency {
			if v != "needs" {
				return nil
			}
			return []kvscheduler.Dependency{{Label: "x", AnyOf: kvscheduler.AnyOfDependency{
				KeySelector: func(string) bool { panic("selector bug") }}}}
		}
		register(t, s, d)
		mustSet(t, s, "d/p", "p")
		_ = set(t, s, "d/a", "needs")
		wantState(t, s, "d/a", kvscheduler.Pending)
	})
	t.Run("descriptor selector and label", func(t *testing.T) {
		sb := kvtest.New()
		s := newSched(t, kvscheduler.Options{})
		d := sb.Descriptor("d", "d/")
		d.KeySelector = func(k string) bool {
			if k == "d/bad" {
				panic("selector bug")
			}
			return strings.HasPrefix(k, "d/")
		}
		d.KeyLabel = func(k string) string {
			if k == "d/label" {
				panic("label bug")
			}
			return k
		}
		register(t, s, d)
		_ = set(t, s, "d/bad", "x", "d/label", "y")
		_ = set(t, s, "d/ok", "z")
		wantState(t, s, "d/ok", kvscheduler.Configured)
	})
}

// A value requested before its descriptor was registered gets the
// descriptor's dependencies once it is: it waits for them.
func TestDependenciesOfValueWaitingForDescriptor(t *testing.T) {
	sb := kvtest.New()
	s := newSched(t, kvscheduler.Options{})
	_ = set(t, s, "d/a", "a|d/b")
	wantState(t, s, "d/a", kvscheduler.Unimplemented)
	register(t, s, withDeps(sb.Descriptor("d", "d/")))
	wantState(t, s, "d/a", kvscheduler.Pending)
	wantSB(t, sb, nil)
}

// A value the southbound created on its own and the northbound then
// requests as it is gets the dependencies of a requested value.
func TestDependenciesOfNotifiedValueRequested(t *testing.T) {
	sb := kvtest.New()
	s := newSched(t, kvscheduler.Options{})
	register(t, s, withDeps(sb.Descriptor("d", "d/")))
	sb.Set("d/a", "a|d/b", true)
	if err := s.PushSBNotification("d/a", "a|d/b", nil); err != nil {
		t.Fatal(err)
	}
	barrier(t, s)
	wantState(t, s, "d/a", kvscheduler.Obtained)
	_ = set(t, s, "d/a", "a|d/b")
	st := s.GetValueStatus("d/a")
	if len(st.Dependencies) != 1 || st.Dependencies[0].Met || st.State == kvscheduler.Configured {
		t.Fatalf("d/a requested with an unmet dependency on d/b: status %+v", st)
	}
}

// badErr is an error type whose nil pointer panics when formatted.
type badErr struct{ msg string }

func (e *badErr) Error() string { return e.msg }

// A descriptor returning a typed nil error (a common Go bug) fails the
// operation without crashing the scheduler.
func TestTypedNilErrorFromDescriptor(t *testing.T) {
	sb := kvtest.New()
	s := newSched(t, kvscheduler.Options{})
	d := sb.Descriptor("d", "d/")
	d.Create = func(context.Context, string, any) (any, error) {
		var e *badErr
		return nil, e
	}
	register(t, s, d)
	_ = set(t, s, "d/a", "x")
	_ = set(t, s, "d/a", "y")
	_ = s.TransactionHistory(time.Time{}, time.Time{})
	wantState(t, s, "d/a", kvscheduler.Failed)
}

// A value whose create failed is not kept once another value replaced it
// successfully.
func TestFailedValueReleased(t *testing.T) {
	sb := kvtest.New()
	s := newSched(t, kvscheduler.Options{HistoryMaxCount: -1})
	register(t, s, sb.Descriptor("d", "d/"))
	collected := make(chan struct{})
	func() {
		v := &[1 << 16]byte{}
		runtime.SetFinalizer(v, func(*[1 << 16]byte) { close(collected) })
		sb.FailNext("create", "d/a", errors.New("boom"))
		_ = set(t, s, "d/a", v)
	}()
	wantState(t, s, "d/a", kvscheduler.Failed)
	mustSet(t, s, "d/a", "ok")
	wantState(t, s, "d/a", kvscheduler.Configured)
	sb.ResetOps()
	for i := 0; i < 20; i++ {
		runtime.GC()
		select {
		case <-collected:
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatal("the value whose create failed is still referenced after it was replaced")
}

// A transaction whose context ends between the start of a delete and the
// delete itself leaves the value as it was: in particular, what it still
// needs is not deleted under it later.
func TestCanceledDeleteNotLeftUnderWay(t *testing.T) {
	sb := kvtest.New()
	s := newSched(t, kvscheduler.Options{})
	d := withDeps(sb.Descriptor("d", "d/"))
	d.DerivedValues = func(key string, _ any) []kvscheduler.KeyValuePair {
		if key == "d/b" {
			return []kvscheduler.KeyValuePair{{Key: "c/x", Value: "x"}}
		}
		return nil
	}
	var cancel context.CancelFunc
	c := sb.Descriptor("c", "c/")
	del := c.Delete
	c.Delete = func(ctx context.Context, key string, v, md any) error {
		if cancel != nil {
			cancel() // the context ends during the first delete
		}
		return del(ctx, key, v, md)
	}
	register(t, s, d, c)
	mustSet(t, s, "d/p", "p", "d/b", "b|d/p", "d/a", "a|d/b")
	var ctx context.Context
	ctx, cancel = context.WithCancel(context.Background())
	_, _ = s.StartNBTransaction().SetValue("d/b", nil).Commit(ctx)
	barrier(t, s)
	cancel = nil
	if _, ok := sb.Values()["d/b"]; !ok {
		t.Fatal("d/b was deleted although its transaction was canceled before")
	}
	_ = set(t, s, "d/p", nil)
	if _, ok := sb.Values()["d/p"]; !ok {
		t.Fatalf("d/p deleted while d/b, which needs it, exists (southbound %v)", sb.Values())
	}
}

// Retries armed by one transaction with different delays and due
// together run in a deterministic order (the shorter delay first).
func TestRetriesDueTogetherInOrder(t *testing.T) {
	for i := 0; i < 20; i++ {
		clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
		s := newSched(t, kvscheduler.Options{Clock: clk, HistoryTrimPeriod: time.Hour})
		sb := kvtest.New()
		register(t, s, sb.Descriptor("d", "d/"))
		retry := kvscheduler.RetryOptions{Period: time.Second, ExpBackoff: true}
		sb.FailNext("create", "d/b", errors.New("b1"), errors.New("b2"))
		_, _ = s.StartNBTransaction().SetValue("d/b", "x").WithRetry(retry).Commit(context.Background())
		sb.FailNext("create", "d/a", errors.New("a1"))
		// The resync attempts d/b again (its second failure: 2 s) and d/a
		// (its first: 1 s).
		_, _ = s.StartNBTransaction().SetValue("d/a", "y").SetValue("d/b", "x").WithRetry(retry).
			WithResync(kvscheduler.FullResync).Commit(context.Background())
		clk.Step(time.Minute)
		eventually(t, "the retries", func() bool {
			return s.GetValueStatus("d/a").State == kvscheduler.Configured && s.GetValueStatus("d/b").State == kvscheduler.Configured
		})
		var order []string
		for _, r := range s.TransactionHistory(time.Time{}, time.Time{}) {
			if r.Type == kvscheduler.RetryFailedOps {
				for _, op := range r.Executed {
					order = append(order, op.Key)
				}
			}
		}
		if len(order) == 0 || order[0] != "d/a" {
			t.Fatalf("run %d: retries ran in the order %v, want d/a (due first) first", i, order)
		}
		_ = s.Close()
	}
}
