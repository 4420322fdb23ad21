package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sync"
	"time"

	"k8s.io/client-go/tools/clientcmd"
)

// framework is one controller framework under test.
type framework interface {
	// watch starts handling the workload's objects in namespace: for every
	// object handled, seen is called with its key and its generation marker.
	watch(ctx context.Context, w workload, kubeconfig, namespace string, workers int, seen func(key, gen string)) error
	// dispatch starts a controller with no API server behind it and returns
	// a function that enqueues one key; handled is called for each key the
	// no-op handler receives.
	dispatch(ctx context.Context, workers int, handled func()) (enqueue func(key string), err error)
}

// tracker counts handled objects for the cluster phase.
type tracker struct {
	mu        sync.Mutex
	seen      map[string]bool
	wantGen   string
	updated   map[string]bool
	allSeen   chan struct{}
	allUpdate chan struct{}
	objects   int
	updates   int
}

func newTracker(objects, updates int) *tracker {
	return &tracker{
		seen: map[string]bool{}, updated: map[string]bool{},
		allSeen: make(chan struct{}), allUpdate: make(chan struct{}),
		objects: objects, updates: updates,
	}
}

func (t *tracker) observe(key, gen string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.seen[key] {
		t.seen[key] = true
		if len(t.seen) == t.objects {
			close(t.allSeen)
		}
	}
	if t.wantGen != "" && gen == t.wantGen && !t.updated[key] {
		t.updated[key] = true
		if len(t.updated) == t.updates {
			close(t.allUpdate)
		}
	}
}

func (t *tracker) expect(gen string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.wantGen = gen
}

func waitFor(ctx context.Context, ch <-chan struct{}, what string) error {
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
	}
}

func clusterPhase(ctx context.Context, cfg config, fw framework) (result, error) {
	ctx, cancel := context.WithTimeout(ctx, deadline)
	defer cancel()
	t := newTracker(cfg.objects, cfg.updates)
	w := workloads[cfg.workload]

	sampler := startHeapSampler()
	stopProfile, err := startCPUProfile(cfg, "coldstart")
	if err != nil {
		return result{}, err
	}
	defer stopProfile()
	cpuBefore := cpuTime()
	began := time.Now()
	var firstOnce sync.Once
	var firstHandled time.Duration
	firstDone := make(chan struct{})
	observe := func(key, gen string) {
		firstOnce.Do(func() {
			firstHandled = time.Since(began)
			close(firstDone)
		})
		t.observe(key, gen)
	}
	if err := fw.watch(ctx, w, cfg.kubeconfig, cfg.namespace, cfg.workers, observe); err != nil {
		sampler.stop()
		return result{}, err
	}
	var synced time.Duration
	if _, ok := fw.(interface{ watchReturnsAtSync() }); ok {
		synced = time.Since(began)
	}
	if err := waitFor(ctx, t.allSeen, "every object to be handled"); err != nil {
		sampler.stop()
		return result{}, err
	}
	stopProfile()
	var r result
	r.ColdStart = time.Since(began).Seconds()
	r.ColdStartCPU = (cpuTime() - cpuBefore).Seconds()
	<-firstDone // every object was seen, so the first was
	r.FirstHandled, r.Synced = firstHandled.Seconds(), synced.Seconds()
	r.PeakHeapBytes = sampler.stop()
	r.PeakRSSBytes = peakRSS()
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	r.HeapBytes = ms.HeapAlloc
	if dir := os.Getenv("LARIAT_BENCH_HEAP_PROFILE_DIR"); dir != "" {
		if err := writeHeapProfile(filepath.Join(dir, cfg.child+".heap")); err != nil {
			return result{}, err
		}
	}

	restConfig, err := clientcmd.BuildConfigFromFlags("", cfg.kubeconfig)
	if err != nil {
		return result{}, err
	}
	cs := clientset(restConfig)
	gen := fmt.Sprintf("%s-%d", cfg.child, time.Now().UnixNano())
	t.expect(gen)
	if stopProfile, err = startCPUProfile(cfg, "steady"); err != nil {
		return result{}, err
	}
	defer stopProfile()
	began = time.Now()
	err = forEach(ctx, cfg.updates, 16, func(ctx context.Context, i int) error {
		return w.update(ctx, cs, cfg.namespace, objectName(w, i), gen)
	})
	if err != nil {
		return result{}, err
	}
	if err := waitFor(ctx, t.allUpdate, "every update to be handled"); err != nil {
		return result{}, err
	}
	r.Steady = time.Since(began).Seconds()
	return r, nil
}

// writeHeapProfile records where the heap after sync goes, for
// `go tool pprof` (set LARIAT_BENCH_HEAP_PROFILE_DIR).
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return pprof.WriteHeapProfile(f)
}

// startCPUProfile profiles the child's CPU until the returned function is
// called, into <child>.<phase>.cpu in LARIAT_BENCH_CPU_PROFILE_DIR, for
// `go tool pprof`; without that variable it does nothing. The last round's
// profile is the one left. A -baseline child's go to its "base"
// subdirectory (see baselineProfileEnv).
func startCPUProfile(cfg config, phase string) (stop func(), err error) {
	dir := os.Getenv("LARIAT_BENCH_CPU_PROFILE_DIR")
	if dir == "" {
		return func() {}, nil
	}
	f, err := os.Create(filepath.Join(dir, cfg.child+"."+phase+".cpu"))
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			pprof.StopCPUProfile()
			f.Close()
		})
	}, nil
}

func dispatchPhase(ctx context.Context, cfg config, fw framework) (result, error) {
	ctx, cancel := context.WithTimeout(ctx, deadline)
	defer cancel()
	keys := make([]string, cfg.keys)
	for i := range keys {
		keys[i] = fmt.Sprintf("ns/key-%07d", i)
	}
	var mu sync.Mutex
	count := 0
	done := make(chan struct{})
	handled := func() {
		mu.Lock()
		count++
		if count == len(keys) {
			close(done)
		}
		mu.Unlock()
	}
	enqueue, err := fw.dispatch(ctx, cfg.workers, handled)
	if err != nil {
		return result{}, err
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	stopProfile, err := startCPUProfile(cfg, "dispatch")
	if err != nil {
		return result{}, err
	}
	defer stopProfile()
	cpuBefore := cpuTime()
	began := time.Now()
	for _, k := range keys {
		enqueue(k)
	}
	if err := waitFor(ctx, done, "every key to be handled"); err != nil {
		return result{}, err
	}
	elapsed := time.Since(began)
	cpu := cpuTime() - cpuBefore
	runtime.ReadMemStats(&after)
	return result{Dispatch: elapsed.Seconds(), DispatchCPU: cpu.Seconds(), DispatchAlloc: after.TotalAlloc - before.TotalAlloc}, nil
}
