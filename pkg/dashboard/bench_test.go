package dashboard_test

import (
	"fmt"
	"io"
	"net/http"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/lariat-dev/lariat/pkg/dashboard"
	"github.com/lariat-dev/lariat/pkg/eventloop/eventlooptest"
)

// BenchmarkLoopThroughput measures the event loop with the KV scheduler
// behind it (each event a transaction creating a value), without a
// dashboard and with a dashboard stream client attached that reads
// everything: the issue asks for the second within 5% of the first (see
// docs/benchmarks.md). Events are pushed without waiting; the time is
// until the last is processed. Run the variants many times, interleaved
// (-count), and compare medians: the machine's noise is larger than the
// difference.
func BenchmarkLoopThroughput(b *testing.B) {
	for _, attached := range []bool{false, true} {
		name := "without-dashboard"
		if attached {
			name = "with-sse-client"
		}
		b.Run(name, func(b *testing.B) {
			f := newFixture(b)
			if attached {
				d, srv := f.dashboard(b, dashboard.Options{})
				req, _ := http.NewRequestWithContext(b.Context(), "GET", srv.URL+"/ui/api/stream", nil)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				defer resp.Body.Close()
				go func() { _, _ = io.Copy(io.Discard, resp.Body) }()
				// The client is counted before the response's headers are
				// sent: it is attached now.
				if d.Clients() != 1 {
					b.Fatalf("%d stream clients, want 1", d.Clients())
				}
			}
			events := make([]*eventlooptest.Event, b.N)
			for i := range events {
				events[i] = eventlooptest.NewUpdate(fmt.Sprintf("put db/%08d", i))
			}
			// The garbage of the previous run (a graph of b.N values) is
			// collected before this one is timed, not during it: else the
			// second variant pays for the first.
			runtime.GC()
			cpu0 := cpuTime()
			b.ResetTimer()
			for _, ev := range events {
				if err := f.loop.PushEventContext(b.Context(), ev); err != nil {
					b.Fatal(err)
				}
			}
			if err := events[len(events)-1].Wait(b.Context()); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
			// CPU time of the whole process per event: what the loop, the
			// scheduler and (attached) the dashboard and its client cost,
			// less sensitive than wall time to other jobs on the machine.
			b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/event")
		})
	}
}

// cpuTime is the CPU time (user and system) the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
