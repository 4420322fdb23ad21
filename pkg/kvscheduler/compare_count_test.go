package kvscheduler_test

import (
	"context"
	"sync"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// TestInSyncResyncAsksTheComparatorOncePerValue: a resync that finds a
// value as wanted asks whether the southbound's value equals the wanted
// one exactly once, not once per use of the answer (the walk's, the
// dependencies' of the value in the southbound, before and after the
// update): comparators of rich values (Kubernetes objects) are costly,
// and a resync asks about every value.
func TestInSyncResyncAsksTheComparatorOncePerValue(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	var mu sync.Mutex
	calls := map[string]int{}
	counting := func(d *kvscheduler.Descriptor) *kvscheduler.Descriptor {
		d.ValueComparator = func(key string, a, b any) bool {
			mu.Lock()
			calls[key]++
			mu.Unlock()
			return a == b
		}
		return d
	}
	register(t, s, counting(sb.Descriptor("if", "if/")), counting(withDeps(sb.Descriptor("route", "route/"))))
	values := []any{"if/a", "x", "route/1", "r|if/a", "route/2", "r|route/1"}
	mustSet(t, s, values...)
	mu.Lock()
	clear(calls)
	mu.Unlock()
	txn := s.StartNBTransaction().WithResync(kvscheduler.FullResync)
	for i := 0; i+1 < len(values); i += 2 {
		txn.SetValue(values[i].(string), values[i+1])
	}
	rec, err := txn.Commit(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Executed) != 0 {
		t.Fatalf("in-sync resync executed %v", rec.Executed)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, k := range []string{"if/a", "route/1", "route/2"} {
		// Exactly once: never asking would take a value for in sync
		// without looking at it.
		if calls[k] != 1 {
			t.Errorf("comparator asked %d times about %s in an in-sync resync, want 1 (all: %v)", calls[k], k, calls)
		}
	}
}
