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

// TestRandomRepro25JGuard_LeftoverOfRemovedBase (hand-made from
// TestRandomRepro25J): the base whose leftover derived value is still in
// the southbound is deleted for good (nothing wanted there any more), then
// requested and created again, and lost with the leftover. The base's
// node must not leave the graph while the leftover is its: else the new
// node did not list it, and the resync that found the base gone did not
// take the leftover with it (retried for ever, "does not exist").
func TestRandomRepro25JGuard_LeftoverOfRemovedBase(t *testing.T) {
	checkScenario(t, scenario{NoDerivedRetrieve: true, Txns: []rtxn{
		{Set: []rset{{"a/g0/4", &rval{Derived: []int{1}}}}},
		{Fail: []rfail{{"delete", "d/g0/4/1"}}, Set: []rset{{"a/g0/4", &rval{Ver: 1}}}},
		{Fail: []rfail{{"delete", "d/g0/4/1"}}, Set: []rset{{"a/g0/4", nil}}},
		{Set: []rset{{"a/g0/4", &rval{Ver: 2}}}},
		{Lose: []string{"a/g0/4"}},
	}})
}

// TestLeftoverKeepsRemovedBaseUntilGone: a base deleted while a derived
// value it no longer derives is left over in the southbound (its delete
// failed) stays in the graph, REMOVED, for that value alone, and leaves
// it once the value's retry deleted it.
func TestLeftoverKeepsRemovedBaseUntilGone(t *testing.T) {
	clk := &retryClock{FakeClock: clocktesting.NewFakeClock(time.Unix(1000, 0))}
	s := newSched(t, kvscheduler.Options{Clock: clk, HistoryTrimPeriod: trimPeriod})
	sb := kvtest.New()
	a, d := sb.Descriptor("a", "a/"), sb.Descriptor("d", "d/")
	a.DerivedValues = func(k string, v any) []kvscheduler.KeyValuePair {
		if v == "with" {
			return []kvscheduler.KeyValuePair{{Key: "d/" + strings.TrimPrefix(k, "a/"), Value: "x"}}
		}
		return nil
	}
	d.Retrieve, d.RetrieveKeys = nil, nil
	register(t, s, a, d)
	ctx := context.Background()
	commit := func(v any) {
		t.Helper()
		_, _ = s.StartNBTransaction().SetValue("a/1", v).WithRetry(kvscheduler.RetryOptions{Period: time.Second}).Commit(ctx)
	}
	commit("with")
	sb.FailNext("delete", "d/1", errors.New("e1"))
	commit("without") // d/1 is left over
	sb.FailNext("delete", "d/1", errors.New("e2"))
	commit(nil) // a/1 goes; d/1 stays, failed again
	wantSB(t, sb, map[string]any{"d/1": "x"})
	wantState(t, s, "a/1", kvscheduler.Removed)
	for clk.pending() > 0 {
		clk.Step(time.Hour)
		barrier(t, s)
	}
	wantSB(t, sb, nil)
	wantState(t, s, "d/1", kvscheduler.NonExistent)
	wantState(t, s, "a/1", kvscheduler.NonExistent)
}
