package kvscheduler_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// BenchmarkAdvDenseAnyOfPending measures one transaction that sets n
// values, each waiting for x/1 (absent) and needing any one "y/" value:
// every value waits on all the others. Measured on the shared 2-core
// machine: n=100 takes 0.06 s, 200 0.39 s, 400 3.8 s, 500 6 s, 1000 43 s,
// 2000 more than 280 s: the cost grows about as the cube of n, where
// docs/kvscheduler.md's cost model says a long waiting chain costs its
// shorter side.
func BenchmarkAdvDenseAnyOfPending(b *testing.B) {
	for _, n := range []int{100, 200, 400} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				sb := kvtest.New()
				s := newSched(b, kvscheduler.Options{HistoryMaxCount: -1})
				register(b, s, sb.Descriptor("x", "x/"), withDeps(sb.Descriptor("y", "y/")))
				txn := s.StartNBTransaction()
				for j := 0; j < n; j++ {
					txn.SetValue(fmt.Sprintf("y/%06d", j), "v|y/*,x/1")
				}
				if _, err := txn.Commit(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
