package kvscheduler_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// BenchmarkFullResync100k resyncs 100,000 independent values against an
// empty southbound (Retrieve finds nothing, so all are created) and reports
// the scheduler's memory per value after the resync.
func BenchmarkFullResync100k(b *testing.B) {
	const n = 100_000
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("v/%d", i)
	}
	ctx := context.Background()
	var bytesPerValue float64
	var cpu cpuMeter
	for b.Loop() {
		b.StopTimer()
		sb := kvtest.New()
		s, err := kvscheduler.New(kvscheduler.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if err := s.RegisterDescriptor(ctx, sb.Descriptor("val", "v/")); err != nil {
			b.Fatal(err)
		}
		txn := s.StartNBTransaction().WithResync(kvscheduler.FullResync)
		for i, k := range keys {
			txn.SetValue(k, i)
		}
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		b.StartTimer()
		cpu.begin()
		rec, err := txn.Commit(ctx)
		cpu.end()
		b.StopTimer()
		if err != nil || len(rec.Executed) != n {
			b.Fatalf("%v, %d operations", err, len(rec.Executed))
		}
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		// Held by the scheduler (and the fake southbound's copy) after the
		// resync; measured while s is still alive.
		bytesPerValue = float64(after.HeapAlloc-before.HeapAlloc) / n
		runtime.KeepAlive(s)
		_ = s.Close()
		b.StartTimer()
	}
	b.ReportMetric(bytesPerValue, "heap-B/value")
	cpu.report(b)
}

// BenchmarkDependencyChain10k creates a chain of 10,000 values, each
// depending on the previous one, in one transaction: the scheduler must not
// recurse along the chain. It runs against two southbounds: "recording",
// kvtest's, which logs every operation and numbers each value's metadata
// for the tests' assertions (about a quarter of the time, and 5 MB of the
// 20 MB a transaction leaves live, are that log and those copies), and
// "values", the cost benchmarks' mapSouthbound, which only holds the
// values, so that what is measured is the scheduler.
func BenchmarkDependencyChain10k(b *testing.B) {
	b.Run("recording", func(b *testing.B) {
		benchChain10k(b, func() *kvscheduler.Descriptor { return kvtest.New().Descriptor("chain", "c/") })
	})
	b.Run("values", func(b *testing.B) {
		benchChain10k(b, func() *kvscheduler.Descriptor {
			return (&mapSouthbound{values: map[string]any{}}).descriptor("chain", "c/")
		})
	})
}

func benchChain10k(b *testing.B, newDescriptor func() *kvscheduler.Descriptor) {
	const n = 10_000
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("c/%d", i)
	}
	ctx := context.Background()
	var cpu cpuMeter
	// What the transaction leaves live and how often the collector ran
	// during it, the collector's share of the chain's time.
	var liveMB, gcs float64
	for b.Loop() {
		b.StopTimer()
		d := newDescriptor()
		d.Dependencies = func(key string, v any) []kvscheduler.Dependency {
			if i := v.(int); i > 0 {
				return []kvscheduler.Dependency{{Key: keys[i-1]}}
			}
			return nil
		}
		s, err := kvscheduler.New(kvscheduler.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if err := s.RegisterDescriptor(ctx, d); err != nil {
			b.Fatal(err)
		}
		txn := s.StartNBTransaction()
		for i := n - 1; i >= 0; i-- { // worst order: every value waits for the next
			txn.SetValue(keys[i], i)
		}
		// The previous iteration's scheduler is collected here, outside
		// the timed part: collecting it is not this transaction's cost.
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		b.StartTimer()
		cpu.begin()
		rec, err := txn.Commit(ctx)
		cpu.end()
		b.StopTimer()
		runtime.ReadMemStats(&after)
		gcs = float64(after.NumGC - before.NumGC)
		runtime.GC()
		runtime.ReadMemStats(&after)
		// Signed: the transaction's own garbage can make the heap shrink.
		liveMB = (float64(after.HeapAlloc) - float64(before.HeapAlloc)) / 1e6
		created := 0
		for _, op := range rec.Executed {
			if !op.NOOP { // values left waiting first are recorded too
				created++
			}
		}
		if err != nil || created != n {
			b.Fatalf("%v, %d operations", err, created)
		}
		_ = s.Close()
		b.StartTimer()
	}
	cpu.report(b)
	b.ReportMetric(liveMB, "live-MB")
	b.ReportMetric(gcs, "gcs/op")
}
