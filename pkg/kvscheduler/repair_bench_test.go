package kvscheduler_test

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// copyingSouthbound holds objects of 20 fields and, like a descriptor
// reading an informer cache, copies every object it reports: what a read
// of everything costs is what the scoped repair avoids.
type copyingSouthbound struct {
	mu   sync.Mutex
	objs map[string]map[string]string
}

func (sb *copyingSouthbound) descriptor() *kvscheduler.Descriptor {
	read := func(keys func(yield func(string) bool)) []kvscheduler.KVWithMetadata {
		sb.mu.Lock()
		defer sb.mu.Unlock()
		var out []kvscheduler.KVWithMetadata
		for k := range keys {
			if o, ok := sb.objs[k]; ok {
				out = append(out, kvscheduler.KVWithMetadata{Key: k, Value: maps.Clone(o)})
			}
		}
		return out
	}
	return &kvscheduler.Descriptor{
		Name: "obj", NBKeyPrefix: "o/", KeySelector: func(k string) bool { return strings.HasPrefix(k, "o/") },
		ValueComparator: func(_ string, a, b any) bool { return reflect.DeepEqual(a, b) },
		Create: func(ctx context.Context, k string, v any) (any, error) {
			sb.mu.Lock()
			defer sb.mu.Unlock()
			sb.objs[k] = maps.Clone(v.(map[string]string))
			return nil, nil
		},
		Delete: func(ctx context.Context, k string, _, _ any) error {
			sb.mu.Lock()
			defer sb.mu.Unlock()
			delete(sb.objs, k)
			return nil
		},
		Retrieve: func(context.Context, []kvscheduler.KVWithMetadata) ([]kvscheduler.KVWithMetadata, error) {
			return read(maps.Keys(sb.objs)), nil
		},
		RetrieveKeys: func(ctx context.Context, keys []string, _ []kvscheduler.KVWithMetadata) ([]kvscheduler.KVWithMetadata, error) {
			return read(func(yield func(string) bool) {
				for _, k := range keys {
					if !yield(k) {
						return
					}
				}
			}), nil
		},
	}
}

// benchmarkRepair100 holds n objects, deletes 100 of them behind the
// scheduler's back and measures their repair: one downstream resync scoped
// to the 100 keys ("scoped"), one scoped to each key ("per-key", as an
// operator repairing each deletion as it hears of it), or the downstream
// resync of everything a repair used to be ("whole", once for all 100;
// the operator used to run one per deleted object).
func benchmarkRepair100(b *testing.B, n int, mode string) {
	const damaged = 100
	ctx := context.Background()
	sb := &copyingSouthbound{objs: map[string]map[string]string{}}
	s, err := kvscheduler.New(kvscheduler.Options{HistoryMaxCount: 16})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if err := s.RegisterDescriptor(ctx, sb.descriptor()); err != nil {
		b.Fatal(err)
	}
	keys := make([]string, n)
	txn := s.StartNBTransaction()
	for i := range keys {
		keys[i] = fmt.Sprintf("o/%d", i)
		obj := make(map[string]string, 20)
		for f := range 20 {
			obj[fmt.Sprintf("field-%d", f)] = fmt.Sprintf("value %d of object %d", f, i)
		}
		txn.SetValue(keys[i], obj)
	}
	if _, err := txn.Commit(ctx); err != nil {
		b.Fatal(err)
	}
	gone := keys[:damaged]
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		sb.mu.Lock()
		for _, k := range gone {
			delete(sb.objs, k)
		}
		sb.mu.Unlock()
		b.StartTimer()
		switch mode {
		case "scoped":
			_, err = s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).WithResyncKeys(gone...).Commit(ctx)
		case "per-key":
			for _, k := range gone {
				if _, err = s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).WithResyncKeys(k).Commit(ctx); err != nil {
					break
				}
			}
		case "whole":
			_, err = s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).Commit(ctx)
		}
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		sb.mu.Lock()
		got := len(sb.objs)
		sb.mu.Unlock()
		if got != n {
			b.Fatalf("%d objects after the repair, want %d", got, n)
		}
		b.StartTimer()
	}
}

// BenchmarkRepair100 repairs 100 objects deleted out of band among 1,000
// and among 5,000.
func BenchmarkRepair100(b *testing.B) {
	for _, n := range []int{1000, 5000} {
		for _, mode := range []string{"scoped", "per-key", "whole"} {
			b.Run(fmt.Sprintf("N=%d/%s", n, mode), func(b *testing.B) { benchmarkRepair100(b, n, mode) })
		}
	}
}
