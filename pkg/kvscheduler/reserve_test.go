package kvscheduler_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// TestResyncWithoutKeyDependenciesSizesNoIndex: a graph whose values have
// no dependency on a key keeps the dependency index empty, and a resync of
// it must not make that index anew, sized for every value, each time (it
// once did): it allocates about what the same resync does when one value
// has such a dependency.
func TestResyncWithoutKeyDependenciesSizesNoIndex(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates a graph of 10,000 values")
	}
	resyncBytes := func(last string) uint64 {
		s := newSched(t, kvscheduler.Options{HistoryMaxCount: -1})
		sb := kvtest.New()
		register(t, s, withDeps(sb.Descriptor("a", "a/")))
		const n = 10000
		fill := func(txn *kvscheduler.Txn) *kvscheduler.Txn {
			for i := range n {
				txn.SetValue(fmt.Sprintf("a/%05d", i), "v")
			}
			return txn.SetValue("a/zz", last)
		}
		if _, err := fill(s.StartNBTransaction()).Commit(context.Background()); err != nil {
			t.Fatal(err)
		}
		best := ^uint64(0)
		for range 3 {
			txn := fill(s.StartNBTransaction().WithResync(kvscheduler.FullResync))
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			if _, err := txn.Commit(context.Background()); err != nil {
				t.Fatal(err)
			}
			runtime.ReadMemStats(&after)
			best = min(best, after.TotalAlloc-before.TotalAlloc)
		}
		return best
	}
	without := resyncBytes("v")
	with := resyncBytes("v|a/00000")
	if without > with+with/20 {
		t.Errorf("a resync allocates %d bytes without key dependencies, %d with one", without, with)
	}
}
