package kvscheduler_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// The benchmarks of this file measure what a transaction costs against the
// size of the graph it runs on (issue 13, "cost proportional to the
// change"): the graph is built once, outside the timed loop, and every
// iteration changes only what the benchmark names.

// mapSouthbound is a southbound that only holds its values: no operation
// log, so that what is measured is the scheduler.
type mapSouthbound struct {
	mu     sync.Mutex
	values map[string]any
}

func (sb *mapSouthbound) descriptor(name, prefix string) *kvscheduler.Descriptor {
	return &kvscheduler.Descriptor{
		Name: name, NBKeyPrefix: prefix,
		KeySelector: func(k string) bool { return strings.HasPrefix(k, prefix) },
		Create: func(ctx context.Context, k string, v any) (any, error) {
			sb.mu.Lock()
			defer sb.mu.Unlock()
			sb.values[k] = v
			return nil, nil
		},
		Update: func(ctx context.Context, k string, _, v any, md any) (any, error) {
			sb.mu.Lock()
			defer sb.mu.Unlock()
			sb.values[k] = v
			return md, nil
		},
		Delete: func(ctx context.Context, k string, _, _ any) error {
			sb.mu.Lock()
			defer sb.mu.Unlock()
			delete(sb.values, k)
			return nil
		},
		Retrieve: func(context.Context, []kvscheduler.KVWithMetadata) ([]kvscheduler.KVWithMetadata, error) {
			sb.mu.Lock()
			defer sb.mu.Unlock()
			// Counted and sized once: grown by append, the result of a
			// read of 100,000 values was allocated five times over, which
			// is this southbound's cost, not the scheduler's.
			c := 0
			for k := range sb.values {
				if strings.HasPrefix(k, prefix) {
					c++
				}
			}
			out := make([]kvscheduler.KVWithMetadata, 0, c)
			for k, v := range sb.values {
				if strings.HasPrefix(k, prefix) {
					out = append(out, kvscheduler.KVWithMetadata{Key: k, Value: v})
				}
			}
			return out, nil
		},
	}
}

// costVal is a value of the cost benchmarks' graph: a version, the keys
// it depends on and whether it has a derived value ("d/") and a property
// ("p/", no descriptor).
type costVal struct {
	Ver     int
	Deps    []string
	Derived bool
	Prop    bool
}

// costGraph registers the descriptors of a graph shaped like real use:
// every value "v/<i>" with i%3 != 0 depends on "v/<i-1>", every fifth
// also on the derived value of "v/<i-5>" (which has one: every value with
// i%5 == 0 has a derived value), every seventh has a property.
func costGraph(b *testing.B, n int) (*kvscheduler.Scheduler, *mapSouthbound, map[string]costVal) {
	b.Helper()
	ctx := context.Background()
	sb := &mapSouthbound{values: map[string]any{}}
	v := sb.descriptor("val", "v/")
	v.Dependencies = func(_ string, x any) []kvscheduler.Dependency {
		cv := x.(costVal)
		deps := make([]kvscheduler.Dependency, len(cv.Deps))
		for i, d := range cv.Deps {
			deps[i] = kvscheduler.Dependency{Key: d}
		}
		return deps
	}
	v.DerivedValues = func(k string, x any) []kvscheduler.KeyValuePair {
		cv := x.(costVal)
		var out []kvscheduler.KeyValuePair
		if cv.Derived {
			out = append(out, kvscheduler.KeyValuePair{Key: "d/" + k[2:], Value: cv.Ver})
		}
		if cv.Prop {
			out = append(out, kvscheduler.KeyValuePair{Key: "p/" + k[2:], Value: cv.Ver})
		}
		return out
	}
	s, err := kvscheduler.New(kvscheduler.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	for _, d := range []*kvscheduler.Descriptor{v, sb.descriptor("der", "d/")} {
		if err := s.RegisterDescriptor(ctx, d); err != nil {
			b.Fatal(err)
		}
	}
	vals := make(map[string]costVal, n)
	txn := s.StartNBTransaction()
	for i := range n {
		cv := costVal{Derived: i%5 == 0, Prop: i%7 == 0}
		if i%3 != 0 {
			cv.Deps = append(cv.Deps, fmt.Sprintf("v/%d", i-1))
		}
		if i%5 == 4 && i >= 5 {
			cv.Deps = append(cv.Deps, fmt.Sprintf("d/%d", (i-4)/5*5-5))
		}
		k := fmt.Sprintf("v/%d", i)
		vals[k] = cv
		txn.SetValue(k, cv)
	}
	if _, err := txn.Commit(ctx); err != nil {
		b.Fatal(err)
	}
	if got, want := len(sb.values), n+n/5; n%5 == 0 && got != want {
		b.Fatalf("%d values in the southbound after building the graph, want %d", got, want)
	}
	return s, sb, vals
}

// BenchmarkCostOneValueTxn changes one value (with a dependency, a derived
// value and a property: an update of the value and of its derived value)
// on graphs of 10,000 and 100,000 values. Targets: ≤ 50 µs and ≤ 20 KB at
// 10,000; at 100,000 no more than 1.5x that.
func BenchmarkCostOneValueTxn(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			s, sb, vals := costGraph(b, n)
			const k = "v/35" // depends on v/34 and has a derived value and a property
			cv := vals[k]
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				cv.Ver = i + 1
				if _, err := s.StartNBTransaction().SetValue(k, cv).Commit(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			sb.mu.Lock()
			defer sb.mu.Unlock()
			if got := sb.values["d/35"]; got != cv.Ver {
				b.Fatalf("derived value %v, want %d", got, cv.Ver)
			}
		})
	}
}

// BenchmarkCostTxn1000Of10k changes 1,000 of the 10,000 values of the
// graph in one transaction (BenchmarkTransaction1000 creates 1,000 values
// in an empty scheduler). Target: ≤ 3 ms.
func BenchmarkCostTxn1000Of10k(b *testing.B) {
	s, _, vals := costGraph(b, 10_000)
	ctx := context.Background()
	var cpu cpuMeter
	b.ReportAllocs()
	b.ResetTimer()
	cpu.begin()
	for i := 0; b.Loop(); i++ {
		txn := s.StartNBTransaction()
		for j := 0; j < 10_000; j += 10 {
			k := fmt.Sprintf("v/%d", j)
			cv := vals[k]
			cv.Ver = i + 1
			txn.SetValue(k, cv)
		}
		if _, err := txn.Commit(ctx); err != nil {
			b.Fatal(err)
		}
	}
	cpu.end()
	cpu.report(b)
}

// BenchmarkCostChain10kHeadChange changes the head of a chain of 10,000
// values, each depending on the previous one (BenchmarkDependencyChain10k
// creates such a chain in one transaction). Only the head is updated.
func BenchmarkCostChain10kHeadChange(b *testing.B) {
	const n = 10_000
	ctx := context.Background()
	sb := &mapSouthbound{values: map[string]any{}}
	d := sb.descriptor("chain", "c/")
	d.Dependencies = func(k string, _ any) []kvscheduler.Dependency {
		var i int
		if _, err := fmt.Sscanf(k, "c/%d", &i); err != nil || i == 0 {
			return nil
		}
		return []kvscheduler.Dependency{{Key: fmt.Sprintf("c/%d", i-1)}}
	}
	s, err := kvscheduler.New(kvscheduler.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if err := s.RegisterDescriptor(ctx, d); err != nil {
		b.Fatal(err)
	}
	txn := s.StartNBTransaction()
	for i := n - 1; i >= 0; i-- {
		txn.SetValue(fmt.Sprintf("c/%d", i), 0)
	}
	if _, err := txn.Commit(ctx); err != nil {
		b.Fatal(err)
	}
	if len(sb.values) != n {
		b.Fatalf("%d values, want %d", len(sb.values), n)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		rec, err := s.StartNBTransaction().SetValue("c/0", i+1).Commit(ctx)
		if err != nil || len(rec.Executed) != 1 {
			b.Fatalf("%v, %d operations", err, len(rec.Executed))
		}
	}
}

// BenchmarkCostFullResync100kInSync runs a full resync of 100,000 values
// that the southbound already holds: Retrieve returns them all and nothing
// is to be done (BenchmarkFullResync100k creates them in an empty
// southbound). Target: ≤ 0.5 s.
func BenchmarkCostFullResync100kInSync(b *testing.B) {
	const n = 100_000
	s, sb, vals := costGraph(b, n)
	ctx := context.Background()
	keys := slices.Sorted(maps.Keys(vals))
	var cpu cpuMeter
	b.ReportAllocs()
	b.ResetTimer()
	cpu.begin()
	for b.Loop() {
		txn := s.StartNBTransaction().WithResync(kvscheduler.FullResync)
		for _, k := range keys {
			txn.SetValue(k, vals[k])
		}
		rec, err := txn.Commit(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if len(rec.Executed) != 0 {
			b.Fatalf("%d operations in a resync with nothing to change, first %+v", len(rec.Executed), rec.Executed[0])
		}
	}
	b.StopTimer()
	cpu.end()
	cpu.report(b)
	if got := len(sb.values); got != n+n/5 {
		b.Fatalf("%d values in the southbound, want %d", got, n+n/5)
	}
}

// BenchmarkCostSelectorDep measures an any-of dependency given by a key
// selector (a function, which no index can enumerate), on the graphs of
// BenchmarkCostOneValueTxn plus one value s/0 whose selector matches v/35
// only. "dependent" changes s/0 (its dependencies, and so its selector,
// are new); "provider" deletes v/35 and creates it again, every other
// transaction, so that s/0 is deleted into PENDING and created again.
func BenchmarkCostSelectorDep(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		for _, what := range []string{"dependent", "provider"} {
			b.Run(fmt.Sprintf("%s/N=%d", what, n), func(b *testing.B) {
				s, sb, vals := costGraph(b, n)
				ctx := context.Background()
				d := sb.descriptor("sel", "s/")
				d.Dependencies = func(string, any) []kvscheduler.Dependency {
					return []kvscheduler.Dependency{{Label: "v/35", AnyOf: kvscheduler.AnyOfDependency{
						KeySelector: func(k string) bool { return k == "v/35" }}}}
				}
				if err := s.RegisterDescriptor(ctx, d); err != nil {
					b.Fatal(err)
				}
				if _, err := s.StartNBTransaction().SetValue("s/0", 0).Commit(ctx); err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; b.Loop(); i++ {
					txn := s.StartNBTransaction()
					switch {
					case what == "dependent":
						txn.SetValue("s/0", i+1)
					case i%2 == 0:
						txn.SetValue("v/35", nil)
					default:
						txn.SetValue("v/35", vals["v/35"])
					}
					rec, err := txn.Commit(ctx)
					if err != nil || !slices.ContainsFunc(rec.Executed, func(op kvscheduler.RecordedOp) bool {
						return op.Key == "s/0" && !op.NOOP
					}) {
						b.Fatalf("%v %+v", err, rec.Executed)
					}
				}
			})
		}
	}
}
