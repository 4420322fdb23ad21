package main

import (
	"runtime/metrics"
	"sync"
	"syscall"
	"time"
)

// heapSampler records the largest Go heap seen during the cold start: live
// objects and garbage not yet collected, which is what the process must
// have memory for. runtime/metrics reads it without stopping the world, so
// sampling does not slow the framework it measures.
type heapSampler struct {
	done chan struct{}
	wg   sync.WaitGroup
	peak uint64
}

const heapObjectsMetric = "/memory/classes/heap/objects:bytes"

// sampleEvery is often enough to catch the peak of a cold start that takes
// a second or more: the heap grows by a few MiB per sample at most.
const sampleEvery = 2 * time.Millisecond

func startHeapSampler() *heapSampler {
	s := &heapSampler{done: make(chan struct{})}
	s.wg.Go(func() {
		sample := []metrics.Sample{{Name: heapObjectsMetric}}
		ticker := time.NewTicker(sampleEvery)
		defer ticker.Stop()
		for {
			metrics.Read(sample)
			s.peak = max(s.peak, sample[0].Value.Uint64())
			select {
			case <-s.done:
				metrics.Read(sample) // the heap when the cold start ended
				s.peak = max(s.peak, sample[0].Value.Uint64())
				return
			case <-ticker.C:
			}
		}
	})
	return s
}

// stop ends the sampling and returns the peak heap in bytes.
func (s *heapSampler) stop() uint64 {
	close(s.done)
	s.wg.Wait()
	return s.peak
}

// peakRSS returns the most memory the process has held in RAM so far (the
// kernel's high-water mark), in bytes.
func peakRSS() uint64 {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0
	}
	return uint64(u.Maxrss) * 1024 // Linux reports KiB
}

// cpuTime returns the CPU time (user and system, all threads) the process
// has spent so far.
func cpuTime() time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
