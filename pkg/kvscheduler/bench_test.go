package kvscheduler_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// BenchmarkTransaction1000 commits one transaction of 1,000 values, each
// with one derived value and every second one depending on another value,
// with simulation and history on.
func BenchmarkTransaction1000(b *testing.B) {
	const n = 1000
	noop := func(context.Context, string, any) (any, error) { return nil, nil }
	del := func(context.Context, string, any, any) error { return nil }
	val := &kvscheduler.Descriptor{
		Name: "val", NBKeyPrefix: "v/", KeySelector: func(k string) bool { return strings.HasPrefix(k, "v/") },
		Create: noop, Delete: del,
		DerivedValues: func(k string, v any) []kvscheduler.KeyValuePair {
			return []kvscheduler.KeyValuePair{{Key: "d/" + k[2:], Value: v}}
		},
		Dependencies: func(k string, v any) []kvscheduler.Dependency {
			if i := v.(int); i%2 == 1 {
				return []kvscheduler.Dependency{{Key: fmt.Sprintf("v/%d", i-1)}}
			}
			return nil
		},
	}
	der := &kvscheduler.Descriptor{
		Name: "der", KeySelector: func(k string) bool { return strings.HasPrefix(k, "d/") },
		Create: noop, Delete: del,
	}
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("v/%d", i)
	}
	ctx := context.Background()
	var cpu cpuMeter
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		s, err := kvscheduler.New(kvscheduler.Options{})
		if err != nil {
			b.Fatal(err)
		}
		_ = s.RegisterDescriptor(ctx, val)
		_ = s.RegisterDescriptor(ctx, der)
		txn := s.StartNBTransaction()
		for i := n - 1; i >= 0; i-- {
			txn.SetValue(keys[i], i)
		}
		// The previous iteration's scheduler is collected here, outside
		// the timed part: collecting it is not this transaction's cost.
		runtime.GC()
		b.StartTimer()
		cpu.begin()
		rec, err := txn.Commit(ctx)
		cpu.end()
		if err != nil || len(rec.Executed) != 2*n {
			b.Fatalf("%v %d", err, len(rec.Executed))
		}
		b.StopTimer()
		_ = s.Close()
		b.StartTimer()
	}
	cpu.report(b)
}
