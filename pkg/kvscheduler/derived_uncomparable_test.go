package kvscheduler_test

import (
	"context"
	"sync"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// sliceVal is a value whose Go type is not comparable (it holds a slice)
// and is not a pointer: the scheduler cannot tell two of them apart
// without asking the descriptor.
type sliceVal struct {
	Ver  int
	Keys []string
}

// TestUncomparableBaseDerivedValuesAskedOncePerChange: a transaction that
// creates, then one that updates, a value whose type is not comparable
// asks its descriptor for its derived values once, not once more per
// derived value it creates (the held derived set asked again what the
// value in the southbound derives, for each: CostTxn1000Of10k's
// allocations grew 55%).
func TestUncomparableBaseDerivedValuesAskedOncePerChange(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	var mu sync.Mutex
	calls := 0
	b := sb.Descriptor("b", "b/")
	b.ValueComparator = func(_ string, x, y any) bool {
		xv, yv := x.(sliceVal), y.(sliceVal)
		return xv.Ver == yv.Ver && len(xv.Keys) == len(yv.Keys)
	}
	b.DerivedValues = func(_ string, v any) []kvscheduler.KeyValuePair {
		mu.Lock()
		calls++
		mu.Unlock()
		sv := v.(sliceVal)
		out := make([]kvscheduler.KeyValuePair, 0, len(sv.Keys))
		for _, k := range sv.Keys {
			out = append(out, kvscheduler.KeyValuePair{Key: "d/" + k, Value: sv.Ver})
		}
		return out
	}
	d := sb.Descriptor("d", "d/")
	d.NBKeyPrefix = ""
	register(t, s, b, d)
	keys := []string{"a", "b", "c"}
	for ver := 1; ver <= 2; ver++ {
		mu.Lock()
		calls = 0
		mu.Unlock()
		txn := s.StartNBTransaction()
		txn.SetValue("b/1", sliceVal{Ver: ver, Keys: keys})
		if _, err := txn.Commit(context.Background()); err != nil {
			t.Fatal(err)
		}
		held := sb.Values()
		for _, k := range keys {
			if v, ok := held["d/"+k]; !ok || v != ver {
				t.Fatalf("after version %d: d/%s is %v (%v), want %d", ver, k, v, ok, ver)
			}
		}
		mu.Lock()
		got := calls
		mu.Unlock()
		if got != 1 {
			t.Errorf("version %d: DerivedValues asked %d times, want 1", ver, got)
		}
	}
}
