package kvscheduler_test

import (
	"syscall"
	"testing"
	"time"
)

// cpuMeter measures the CPU time the process spends (all threads: the
// scheduler's goroutine, the benchmark's and the garbage collector's)
// while a benchmark's timer runs. On a machine shared with other jobs the
// wall time per operation varies with the load; the CPU time varies much
// less, so the benchmarks report both.
type cpuMeter struct {
	start time.Duration
	total time.Duration
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// begin and end bracket a timed part (with b.StartTimer and b.StopTimer).
func (m *cpuMeter) begin() { m.start = processCPU() }
func (m *cpuMeter) end()   { m.total += processCPU() - m.start }

// report adds the CPU time per operation to the benchmark's results.
func (m *cpuMeter) report(b *testing.B) {
	if b.N > 0 {
		b.ReportMetric(float64(m.total.Microseconds())/1000/float64(b.N), "cpu-ms/op")
	}
}
