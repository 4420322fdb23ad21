package workqueue

import (
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// settle gives the delay goroutine a moment to act on a clock step before
// asserting that nothing happened. A missed bug would only make the test
// pass by luck; it can never make a correct queue fail.
func settle() { time.Sleep(2 * time.Millisecond) }

func newFakeClockQueue(t *testing.T, opts Options[string]) (*Queue[string], *clocktesting.FakeClock) {
	t.Helper()
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	opts.Clock = clk
	return newTestQueue(t, opts), clk
}

// waitTimer waits until the delay goroutine armed its timer, so that a
// following Step is guaranteed to fire it.
func waitTimer(t *testing.T, clk *clocktesting.FakeClock) {
	t.Helper()
	eventually(t, "the delay timer to be armed", clk.HasWaiters)
}

func TestAddAfter(t *testing.T) {
	q, clk := newFakeClockQueue(t, Options[string]{})
	q.AddAfter("a", 10*time.Second)
	waitTimer(t, clk)
	if got := q.Len(); got != 0 {
		t.Fatalf("Len right after AddAfter = %d, want 0", got)
	}
	clk.Step(9 * time.Second)
	settle()
	if got := q.Len(); got != 0 {
		t.Fatalf("Len before the delay passed = %d, want 0", got)
	}
	clk.Step(time.Second)
	eventually(t, "the delayed item to be ready", func() bool { return q.Len() == 1 })
	if got := get(t, q); got != "a" {
		t.Fatalf("got %q, want a", got)
	}
}

func TestAddAfterHugeDelay(t *testing.T) {
	q, clk := newFakeClockQueue(t, Options[string]{})
	q.AddAfter("never", time.Duration(math.MaxInt64))
	waitTimer(t, clk)
	clk.Step(100 * 365 * 24 * time.Hour)
	settle()
	if got := q.Len(); got != 0 {
		t.Fatalf("Len = %d, want 0", got)
	}
	q.Add("now")
	if got := get(t, q); got != "now" {
		t.Fatalf("got %q, want now", got)
	}
}

func TestAddAfterNonPositiveIsImmediate(t *testing.T) {
	q, _ := newFakeClockQueue(t, Options[string]{})
	q.AddAfter("zero", 0)
	q.AddAfter("negative", -time.Second)
	want := []string{"zero", "negative"}
	if got := drain(t, q); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestAddAfterEarliestWins(t *testing.T) {
	q, clk := newFakeClockQueue(t, Options[string]{})
	q.AddAfter("sooner", 10*time.Second)
	q.AddAfter("sooner", 2*time.Second) // moves it earlier
	q.AddAfter("kept", 2*time.Second)
	q.AddAfter("kept", 10*time.Second) // must not postpone it
	q.AddAfter("late", 5*time.Second)
	waitTimer(t, clk)

	clk.Step(2 * time.Second)
	eventually(t, "two items ready", func() bool { return q.Len() == 2 })
	settle()
	if got := q.Len(); got != 2 {
		t.Fatalf("Len at 2s = %d, want 2", got)
	}
	want := []string{"sooner", "kept"}
	if got := drain(t, q); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}

	waitTimer(t, clk)
	clk.Step(3 * time.Second)
	eventually(t, "late ready", func() bool { return q.Len() == 1 })
	if got := get(t, q); got != "late" {
		t.Fatalf("got %q, want late", got)
	}
	q.Done("late")

	// Nothing may come back from the superseded ready times.
	clk.Step(time.Hour)
	settle()
	if got := q.Len(); got != 0 {
		t.Fatalf("Len after all delays = %d, want 0", got)
	}
}

func TestDelayedItemsBecomeHigh(t *testing.T) {
	q, clk := newFakeClockQueue(t, Options[string]{})
	q.AddWithPriority("resync", Low)
	q.AddWithPriority("retry-low", Low)
	q.AddAfter("retry-low", time.Second) // upgrades when ready
	q.AddAfter("retry", time.Second)
	waitTimer(t, clk)
	clk.Step(time.Second)
	eventually(t, "delayed items ready", func() bool { return q.Len() == 3 })
	want := []string{"retry-low", "retry", "resync"}
	if got := drain(t, q); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestManyDelaysOneGoroutine(t *testing.T) {
	q, clk := newFakeClockQueue(t, Options[string]{})
	const n = 3 * delayBatch
	var want []string
	for i := range n {
		k := string(rune('a'+i%26)) + "-" + time.Duration(n-i).String()
		// Later keys get shorter delays, so ready order is reversed.
		q.AddAfter(k, time.Duration(n-i)*time.Millisecond)
		want = append(want, k)
	}
	slices.Reverse(want)
	waitTimer(t, clk)
	// The delay goroutine may be swapping its timer (0 waiters for a moment),
	// but one timer per item would show thousands.
	if got := clk.Waiters(); got > 1 {
		t.Fatalf("fake clock has %d waiters, want 1 timer for all delays", got)
	}
	clk.Step(time.Duration(n/2) * time.Millisecond)
	eventually(t, "half of the delayed items", func() bool { return q.Len() == n/2 })
	waitTimer(t, clk)
	clk.Step(time.Duration(n) * time.Millisecond)
	// Ready items are moved in batches, earliest first, so the whole set
	// arrives in ready-time order.
	eventually(t, "all delayed items", func() bool { return q.Len() == n })
	if got := drain(t, q); !slices.Equal(got, want) {
		t.Fatalf("ready order does not follow ready times")
	}
}

func TestAddRateLimited(t *testing.T) {
	q, clk := newFakeClockQueue(t, Options[string]{
		RateLimiter: NewItemExponentialJitterRateLimiter[string](time.Second, 4*time.Second, 0),
	})
	for i, d := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 4 * time.Second} {
		q.AddRateLimited("a")
		if got := q.NumRequeues("a"); got != i+1 {
			t.Fatalf("NumRequeues = %d, want %d", got, i+1)
		}
		waitTimer(t, clk)
		clk.Step(d - time.Millisecond)
		settle()
		if got := q.Len(); got != 0 {
			t.Fatalf("retry %d ready before %v", i, d)
		}
		clk.Step(time.Millisecond)
		eventually(t, "retry to be ready", func() bool { return q.Len() == 1 })
		q.Done(get(t, q))
	}
	q.Forget("a")
	if got := q.NumRequeues("a"); got != 0 {
		t.Fatalf("NumRequeues after Forget = %d, want 0", got)
	}
	q.AddRateLimited("a")
	waitTimer(t, clk)
	clk.Step(time.Second)
	eventually(t, "retry after Forget to use the base delay", func() bool { return q.Len() == 1 })
}

// recorded is what a recorder saw.
type recorded struct {
	added   []Priority
	depth   []int
	waited  []time.Duration
	retried int
}

// recorder is a Metrics that keeps every call for assertions.
type recorder struct {
	mu      sync.Mutex
	added   []Priority
	depth   []int
	waited  []time.Duration
	retried int
}

func (r *recorder) Added(p Priority) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.added = append(r.added, p)
}

func (r *recorder) Depth(n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.depth = append(r.depth, n)
}

func (r *recorder) Waited(d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.waited = append(r.waited, d)
}

func (r *recorder) Retried() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.retried++
}

func (r *recorder) snapshot() recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	return recorded{
		added:   slices.Clone(r.added),
		depth:   slices.Clone(r.depth),
		waited:  slices.Clone(r.waited),
		retried: r.retried,
	}
}

func TestMetrics(t *testing.T) {
	m := &recorder{}
	q, clk := newFakeClockQueue(t, Options[string]{
		Metrics:     m,
		RateLimiter: NewItemExponentialJitterRateLimiter[string](time.Second, time.Second, 0),
	})

	q.AddWithPriority("a", Low) // depth 1
	clk.Step(3 * time.Second)
	q.Add("a")                  // upgrade keeps the first-add time, depth unchanged
	q.AddWithPriority("b", Low) // depth 2
	clk.Step(2 * time.Second)
	if got := get(t, q); got != "a" { // waited 5s, depth 1
		t.Fatalf("got %q, want a", got)
	}
	q.Done("a")
	if got := get(t, q); got != "b" { // waited 2s, depth 0
		t.Fatalf("got %q, want b", got)
	}
	q.Add("b") // dirty while processing: no depth change
	clk.Step(time.Second)
	q.Done("b")       // requeued: depth 1
	q.Done(get(t, q)) // waited 1s (since the add during processing), depth 0

	q.AddRateLimited("c") // retried, ready after 1s
	waitTimer(t, clk)
	clk.Step(time.Second)
	eventually(t, "c ready", func() bool { return q.Len() == 1 }) // added High, depth 1
	clk.Step(4 * time.Second)
	q.Done(get(t, q)) // waited 4s since it became ready, depth 0

	got := m.snapshot()
	wantAdded := []Priority{Low, High, Low, High, High}
	if !slices.Equal(got.added, wantAdded) {
		t.Errorf("Added calls = %v, want %v", got.added, wantAdded)
	}
	wantDepth := []int{1, 2, 1, 0, 1, 0, 1, 0}
	if !slices.Equal(got.depth, wantDepth) {
		t.Errorf("Depth calls = %v, want %v", got.depth, wantDepth)
	}
	wantWaited := []time.Duration{5 * time.Second, 2 * time.Second, time.Second, 4 * time.Second}
	if !slices.Equal(got.waited, wantWaited) {
		t.Errorf("Waited calls = %v, want %v", got.waited, wantWaited)
	}
	if got.retried != 1 {
		t.Errorf("Retried calls = %d, want 1", got.retried)
	}

	q.ShutDown()
	q.Add("ignored")
	q.AddRateLimited("ignored")
	after := m.snapshot()
	if len(after.added) != len(got.added) || after.retried != got.retried {
		t.Errorf("adds after shutdown were counted: %+v", after)
	}
	if last := after.depth[len(after.depth)-1]; last != 0 {
		t.Errorf("last Depth = %d, want 0", last)
	}
}
