package kvscheduler_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// Derived values of derived values, as a buggy descriptor returns them: a
// base whose derived values derive each other, or derive without end. The
// walk's bound ("a walk that exceeds this bound is a bug, reported rather
// than left to spin") is reported in TxnRecord.Errors only: Commit returns
// nil, a requested delete does not happen, and the bound does not stop
// the transaction.

func TestAdvDerivationCycleDoesNotSwallowADelete(t *testing.T) {
	sb := kvtest.New()
	s := newSched(t, kvscheduler.Options{})
	b := sb.Descriptor("b", "b/")
	b.DerivedValues = func(key string, v any) []kvscheduler.KeyValuePair {
		if key == "b/1" {
			return []kvscheduler.KeyValuePair{{Key: "b/2", Value: v}}
		}
		return []kvscheduler.KeyValuePair{{Key: "b/1", Value: v}}
	}
	register(t, s, b)
	rec, err := s.StartNBTransaction().SetValue("b/1", "v").Commit(context.Background())
	if err == nil && len(rec.Errors) > 0 {
		t.Errorf("create of b/1: Commit returned nil, the record has %v", rec.Errors)
	}
	rec, err = s.StartNBTransaction().SetValue("b/1", nil).Commit(context.Background())
	if _, ok := sb.Values()["b/1"]; ok && err == nil {
		t.Errorf("delete of b/1: Commit returned nil, yet the southbound still holds b/1 (%s); record errors %v",
			advState(s, "b/1"), rec.Errors)
	}
}

func TestAdvEndlessDerivationIsStopped(t *testing.T) {
	const limit = 20000 // the test's own cap, about 5 times the walk's documented budget for one node
	sb := kvtest.New()
	s := newSched(t, kvscheduler.Options{})
	b := sb.Descriptor("b", "b/")
	calls := 0
	b.DerivedValues = func(key string, v any) []kvscheduler.KeyValuePair {
		if calls++; calls > limit {
			return nil
		}
		var n int
		_, _ = fmt.Sscanf(key, "b/%d", &n)
		return []kvscheduler.KeyValuePair{{Key: fmt.Sprintf("b/%d", n+1), Value: v}}
	}
	register(t, s, b)
	rec, err := s.StartNBTransaction().SetValue("b/1", "v").Commit(context.Background())
	if calls > limit {
		t.Errorf("the scheduler asked for %d derived values (it stopped only at the test's cap) and created %d values", calls, len(sb.Values()))
	}
	if err == nil && len(rec.Errors) > 0 {
		t.Errorf("Commit returned nil, the record has %v", rec.Errors)
	}
}
