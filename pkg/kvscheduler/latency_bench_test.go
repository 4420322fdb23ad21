package kvscheduler_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// latency is the time each southbound call of BenchmarkLatency1000 takes,
// as a round trip to a remote API would.
const latency = 2 * time.Millisecond

// BenchmarkLatency1000 commits one transaction that creates 1,000
// independent values on a kvtest descriptor whose calls each take 2 ms
// (issue 29: the baseline of parallel apply). Serially it cannot take less
// than 1,000 × 2 ms = 2 s; at parallelism 16 the bound is 125 ms. Only the
// serial sub-benchmark exists until the scheduler can run calls at once.
func BenchmarkLatency1000(b *testing.B) {
	b.Run("serial", func(b *testing.B) { benchmarkLatency(b, 1000) })
}

// benchmarkLatency creates n independent values in one transaction, each
// create sleeping latency first.
func benchmarkLatency(b *testing.B, n int) {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("l/%04d", i)
	}
	ctx := context.Background()
	var inCalls atomic.Int64 // nanoseconds inside the descriptor's calls
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		s, err := kvscheduler.New(kvscheduler.Options{})
		if err != nil {
			b.Fatal(err)
		}
		sb := kvtest.New()
		if err := s.RegisterDescriptor(ctx, slowDescriptor(sb.Descriptor("lat", "l/"), &inCalls)); err != nil {
			b.Fatal(err)
		}
		txn := s.StartNBTransaction()
		for i, k := range keys {
			txn.SetValue(k, i)
		}
		b.StartTimer()
		rec, err := txn.Commit(ctx)
		b.StopTimer()
		if err != nil || len(rec.Executed) != n || len(sb.Values()) != n {
			b.Fatalf("%v: %d operations, %d values in the southbound", err, len(rec.Executed), len(sb.Values()))
		}
		_ = s.Close()
		b.StartTimer()
	}
	// How much the 2 ms sleeps really took (timers overshoot on a busy
	// machine), and what the scheduler added around them.
	b.ReportMetric(float64(b.Elapsed())/float64(b.N)/float64(n*int(latency)), "x-latency-sum")
	b.ReportMetric(float64(inCalls.Load())/float64(b.Elapsed()), "in-calls-share")
}

// slowDescriptor makes d's Create, Update and Delete wait latency (or
// until their context ends) before they act, and adds the time spent in
// them to inCalls.
func slowDescriptor(d *kvscheduler.Descriptor, inCalls *atomic.Int64) *kvscheduler.Descriptor {
	create, update, del := d.Create, d.Update, d.Delete
	d.Create = func(ctx context.Context, k string, v any) (any, error) {
		defer timeCall(inCalls, time.Now())
		if err := sleepCtx(ctx); err != nil {
			return nil, err
		}
		return create(ctx, k, v)
	}
	d.Update = func(ctx context.Context, k string, old, v, md any) (any, error) {
		defer timeCall(inCalls, time.Now())
		if err := sleepCtx(ctx); err != nil {
			return nil, err
		}
		return update(ctx, k, old, v, md)
	}
	d.Delete = func(ctx context.Context, k string, v, md any) error {
		defer timeCall(inCalls, time.Now())
		if err := sleepCtx(ctx); err != nil {
			return err
		}
		return del(ctx, k, v, md)
	}
	return d
}

// timeCall adds the time since start to inCalls.
func timeCall(inCalls *atomic.Int64, start time.Time) { inCalls.Add(int64(time.Since(start))) }

// sleepCtx waits latency, or less if ctx ends first.
func sleepCtx(ctx context.Context) error {
	t := time.NewTimer(latency)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
