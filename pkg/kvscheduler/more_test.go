package kvscheduler_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
	clocktesting "k8s.io/utils/clock/testing"
)

func TestDerivedValueRetriedWithBaseRetryOptions(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	s := newSched(t, kvscheduler.Options{Clock: clk, HistoryTrimPeriod: time.Hour})
	sb := kvtest.New()
	ifd := sb.Descriptor("if", "if/")
	ifd.DerivedValues = func(key string, v any) []kvscheduler.KeyValuePair {
		return []kvscheduler.KeyValuePair{{Key: "addr/" + strings.TrimPrefix(key, "if/"), Value: v}}
	}
	register(t, s, ifd, sb.Descriptor("addr", "addr/"))
	sb.FailNext("create", "addr/a", errors.New("later"))
	rec, err := s.StartNBTransaction().SetValue("if/a", "x").
		WithRetry(kvscheduler.RetryOptions{Period: time.Second, MaxAttempts: 1}).Commit(context.Background())
	if err == nil {
		t.Fatal("no error")
	}
	wantState(t, s, "if/a", kvscheduler.Configured)
	if st := wantState(t, s, "addr/a", kvscheduler.Retrying); !st.Derived {
		t.Fatalf("status %+v", st)
	}
	clk.Step(time.Second)
	eventually(t, "retry", func() bool { return s.GetValueStatus("addr/a").State == kvscheduler.Configured })
	var retry *kvscheduler.TxnRecord
	for _, r := range s.TransactionHistory(time.Time{}, time.Time{}) {
		if r.Type == kvscheduler.RetryFailedOps {
			retry = r
		}
	}
	if retry == nil || len(retry.RetryOf) != 1 || retry.RetryOf[0] != rec.SeqNum {
		t.Fatalf("retry record %+v", retry)
	}
	if !strings.Contains(retry.String(), "Retry failed operations") {
		t.Fatal(retry.String())
	}
}

func TestRetrieveErrorKeepsView(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, sb.Descriptor("a", "a/"))
	mustSet(t, s, "a/1", "x")
	sb.FailNext("retrieve", "a", errors.New("unreachable"))
	rec, err := s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).Commit(context.Background())
	var re *kvscheduler.RetrieveError
	if !errors.As(err, &re) || re.Descriptor != "a" {
		t.Fatalf("commit error %v, want the failed retrieve", err)
	}
	if len(rec.Errors) != 1 || !strings.Contains(rec.Errors[0].Error(), "unreachable") {
		t.Fatalf("errors %v", rec.Errors)
	}
	wantState(t, s, "a/1", kvscheduler.Configured)
	wantOps(t, sb, "create a/1")
}

func TestAnyOfSelectorDependencyAndStatuses(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	b := sb.Descriptor("b", "b/")
	b.Dependencies = func(string, any) []kvscheduler.Dependency {
		return []kvscheduler.Dependency{{Label: "some even a", AnyOf: kvscheduler.AnyOfDependency{
			KeySelector: func(k string) bool { return strings.HasPrefix(k, "a/") && strings.HasSuffix(k, "0") }}}}
	}
	register(t, s, sb.Descriptor("a", "a/"), b)
	mustSet(t, s, "b/1", "x", "a/1", "x")
	if st := wantState(t, s, "b/1", kvscheduler.Pending); st.UnmetDependencies[0] != "some even a" {
		t.Fatalf("unmet %v", st.UnmetDependencies)
	}
	mustSet(t, s, "a/10", "x")
	wantState(t, s, "b/1", kvscheduler.Configured)
	all := s.ValueStatuses(func(k string) bool { return strings.HasPrefix(k, "a/") })
	if len(all) != 2 || all[0].Key != "a/1" {
		t.Fatalf("statuses %+v", all)
	}
}

func TestEmptyDependencyIsInvalid(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	a := sb.Descriptor("a", "a/")
	a.Dependencies = func(string, any) []kvscheduler.Dependency { return []kvscheduler.Dependency{{Label: "oops"}} }
	register(t, s, a)
	wantInvalid(t, set(t, s, "a/1", "x"), "a/1")
	if st := wantState(t, s, "a/1", kvscheduler.Invalid); st.Error == nil {
		t.Fatal("no error")
	}
}

func TestFailedUpdateKeepsOldValue(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, sb.Descriptor("a", "a/"), withDeps(sb.Descriptor("b", "b/")))
	mustSet(t, s, "a/1", "v1", "b/1", "x|a/1")
	sb.ResetOps()
	sb.FailNext("update", "a/1", errors.New("nope"))
	if err := set(t, s, "a/1", "v2"); err == nil {
		t.Fatal("no error")
	}
	// Refreshed after the failure: the old value is still there, and so is
	// its dependent.
	wantSB(t, sb, map[string]any{"a/1": "v1", "b/1": "x|a/1"})
	st := wantState(t, s, "a/1", kvscheduler.Failed)
	if st.LastOp != kvscheduler.OpUpdate {
		t.Fatalf("status %+v", st)
	}
	wantState(t, s, "b/1", kvscheduler.Configured)
}
