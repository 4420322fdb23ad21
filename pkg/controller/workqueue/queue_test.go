package workqueue

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// waitTimeout bounds every wait for something another goroutine does. It is
// a deadline for a hung test, not a timing assertion: passing tests never
// get near it.
const waitTimeout = 10 * time.Second

// get calls q.Get and fails the test if it blocks: use it only where an item
// must be ready.
func get[T comparable](t *testing.T, q *Queue[T]) T {
	t.Helper()
	type result struct {
		item     T
		shutdown bool
	}
	ch := make(chan result, 1)
	go func() {
		item, shutdown := q.Get()
		ch <- result{item, shutdown}
	}()
	select {
	case r := <-ch:
		if r.shutdown {
			t.Fatalf("Get returned shutdown, want an item")
		}
		return r.item
	case <-time.After(waitTimeout):
		t.Fatalf("Get blocked, want an item")
	}
	panic("unreachable")
}

// drain gets and finishes every ready item, returning them in order.
func drain[T comparable](t *testing.T, q *Queue[T]) []T {
	t.Helper()
	var out []T
	for q.Len() > 0 {
		item := get(t, q)
		out = append(out, item)
		q.Done(item)
	}
	return out
}

// eventually polls cond until it holds, for effects of the delay goroutine.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func newTestQueue(t *testing.T, opts Options[string]) *Queue[string] {
	t.Helper()
	q := New(opts)
	t.Cleanup(q.ShutDown)
	return q
}

func TestFIFOWithinPriority(t *testing.T) {
	q := newTestQueue(t, Options[string]{})
	var want []string
	// Enough items to cross several fifo chunks.
	for i := range 3*chunkSize + 7 {
		k := fmt.Sprint("h", i)
		q.Add(k)
		want = append(want, k)
	}
	if got := q.Len(); got != len(want) {
		t.Fatalf("Len = %d, want %d", got, len(want))
	}
	if got := drain(t, q); !slices.Equal(got, want) {
		t.Fatalf("order within High is not FIFO: got %v...", got[:10])
	}

	want = want[:0]
	for i := range 3*chunkSize + 7 {
		k := fmt.Sprint("l", i)
		q.AddWithPriority(k, Low)
		want = append(want, k)
	}
	if got := drain(t, q); !slices.Equal(got, want) {
		t.Fatalf("order within Low is not FIFO: got %v...", got[:10])
	}
}

func TestHighBeforeLow(t *testing.T) {
	q := newTestQueue(t, Options[string]{})
	q.AddWithPriority("l1", Low)
	q.AddWithPriority("l2", Low)
	q.Add("h1")
	q.AddWithPriority("l3", Low)
	q.AddWithPriority("h2", High)
	want := []string{"h1", "h2", "l1", "l2", "l3"}
	if got := drain(t, q); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestOutOfRangePriority(t *testing.T) {
	q := newTestQueue(t, Options[string]{})
	q.AddWithPriority("low", Priority(-3))
	q.AddWithPriority("high", Priority(7))
	want := []string{"high", "low"}
	if got := drain(t, q); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if Priority(7).String() != "High" || Low.String() != "Low" {
		t.Fatalf("String: got %q and %q", Priority(7), Low)
	}
}

func TestUpgradeLowToHigh(t *testing.T) {
	q := newTestQueue(t, Options[string]{})
	q.AddWithPriority("a", Low)
	q.AddWithPriority("b", Low)
	q.AddWithPriority("c", Low)
	q.Add("x")
	q.Add("b") // upgrade: goes behind x, ahead of the Low items
	if got := q.Len(); got != 4 {
		t.Fatalf("Len after upgrade = %d, want 4", got)
	}
	want := []string{"x", "b", "a", "c"}
	if got := drain(t, q); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestLowDoesNotDowngradeHigh(t *testing.T) {
	q := newTestQueue(t, Options[string]{})
	q.AddWithPriority("l", Low)
	q.Add("a")
	q.Add("b")
	q.AddWithPriority("a", Low)
	want := []string{"a", "b", "l"}
	if got := drain(t, q); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// An upgraded item leaves a stale slot in the Low FIFO; when the item is
// later added at Low again it must take its new place, not the stale one.
func TestStaleLowSlotIsSkipped(t *testing.T) {
	q := newTestQueue(t, Options[string]{})
	q.AddWithPriority("a", Low)
	q.AddWithPriority("b", Low)
	q.Add("a")
	if got := get(t, q); got != "a" {
		t.Fatalf("got %q, want upgraded a first", got)
	}
	q.Done("a")
	q.AddWithPriority("a", Low)
	want := []string{"b", "a"}
	if got := drain(t, q); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if got := q.Len(); got != 0 {
		t.Fatalf("Len = %d, want 0", got)
	}
}

func TestDedup(t *testing.T) {
	q := newTestQueue(t, Options[string]{})
	q.Add("a")
	q.AddWithPriority("a", Low)
	q.Add("a")
	q.Add("b")
	q.Add("a")
	if got := q.Len(); got != 2 {
		t.Fatalf("Len = %d, want 2", got)
	}
	want := []string{"a", "b"}
	if got := drain(t, q); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestAddWhileProcessingIsRequeuedOnDone(t *testing.T) {
	for _, tc := range []struct {
		name   string
		readds []Priority
		want   []string
	}{
		{"low", []Priority{Low}, []string{"c", "a"}},
		{"high", []Priority{High}, []string{"a", "c"}},
		{"low then high", []Priority{Low, High, Low}, []string{"a", "c"}},
	} {
		for _, ticket := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/ticket=%v", tc.name, ticket), func(t *testing.T) {
				q := newTestQueue(t, Options[string]{})
				q.Add("a")
				got, tk, _ := q.GetTicket()
				if got != "a" {
					t.Fatalf("got %q, want a", got)
				}
				for _, p := range tc.readds {
					q.AddWithPriority("a", p)
				}
				// Stingy: the item must not be ready while it is processed.
				if got := q.Len(); got != 0 {
					t.Fatalf("Len while processing = %d, want 0", got)
				}
				q.AddWithPriority("c", Low)
				if ticket {
					q.DoneTicket("a", tk)
				} else {
					q.Done("a")
				}
				if got := q.Len(); got != 2 {
					t.Fatalf("Len after Done = %d, want 2", got)
				}
				if got := drain(t, q); !slices.Equal(got, tc.want) {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
			})
		}
	}
}

// TestStaleTicketIsIgnored: a ticket whose hand-out ended ends nothing
// else, neither the item's next hand-out nor another item's that reuses
// its entry.
func TestStaleTicketIsIgnored(t *testing.T) {
	q := newTestQueue(t, Options[string]{})
	q.Add("a")
	q.Add("b")
	_, first, _ := q.GetTicket() // a
	q.Add("a")                   // dirty: queued again on Done
	q.DoneTicket("a", first)
	q.DoneTicket("a", first) // twice: nothing
	if got := get(t, q); got != "b" {
		t.Fatalf("got %q, want b", got)
	}
	q.Done("b")
	item, second, _ := q.GetTicket() // a again, same entry, new hand-out
	if item != "a" {
		t.Fatalf("got %q, want a", item)
	}
	q.Add("a")
	q.DoneTicket("a", first) // the old hand-out's ticket must not end this one
	if got := q.Len(); got != 0 {
		t.Fatalf("Len after a stale ticket = %d, want 0 (a still processing)", got)
	}
	q.DoneTicket("a", second)
	if got := q.Len(); got != 1 {
		t.Fatalf("Len after the right ticket = %d, want 1 (a added while processing)", got)
	}
	q.DoneTicket("a", Ticket{}) // the zero ticket names no hand-out
	if got := drain(t, q); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("got %v, want [a]", got)
	}
	// The queue emptied and its entries were reset: a new item on the
	// reused first entry is not ended by a's old tickets.
	q.Add("c")
	if got, _, _ := q.GetTicket(); got != "c" {
		t.Fatalf("got %q, want c", got)
	}
	q.Add("c")
	q.DoneTicket("c", first)
	q.DoneTicket("c", second)
	if got := q.Len(); got != 0 {
		t.Fatalf("Len after stale tickets = %d, want 0 (c still processing)", got)
	}
}

func TestDoneWithoutGetIsIgnored(t *testing.T) {
	q := newTestQueue(t, Options[string]{})
	q.Done("unknown")
	q.Add("a")
	q.Done("a") // queued, not processing: must stay queued
	if got := q.Len(); got != 1 {
		t.Fatalf("Len = %d, want 1", got)
	}
	item := get(t, q)
	q.Done(item)
	q.Done(item) // twice
	if got := q.Len(); got != 0 {
		t.Fatalf("Len = %d, want 0", got)
	}
}

// TestStingyConcurrent hammers the queue from many producers and workers and
// checks that no item is ever processed by two workers at once and that no
// add is lost: every key is processed after its last add.
func TestStingyConcurrent(t *testing.T) {
	const (
		producers = 8
		workers   = 16
		keys      = 50
		addsEach  = 3000
	)
	q := newTestQueue(t, Options[string]{
		RateLimiter: NewItemExponentialJitterRateLimiter[string](time.Microsecond, 50*time.Microsecond, 0.5),
	})
	var (
		mu        sync.Mutex
		inFlight  = map[string]bool{}
		added     [keys]atomic.Int64 // add generation per key
		processed [keys]atomic.Int64 // generation seen by the latest Get
		violation atomic.Bool
	)
	names := make([]string, keys)
	for i := range names {
		names[i] = fmt.Sprint("key-", i)
	}
	index := func(name string) int {
		var i int
		fmt.Sscanf(name, "key-%d", &i)
		return i
	}

	var workersWG sync.WaitGroup
	for w := range workers {
		workersWG.Go(func() {
			for {
				// Half the workers end their hand-outs by ticket.
				item, tk, shutdown := q.GetTicket()
				if shutdown {
					return
				}
				mu.Lock()
				if inFlight[item] {
					violation.Store(true)
				}
				inFlight[item] = true
				mu.Unlock()

				i := index(item)
				gen := added[i].Load()
				for {
					old := processed[i].Load()
					if gen <= old || processed[i].CompareAndSwap(old, gen) {
						break
					}
				}
				if w%4 == 0 && gen%7 == 0 {
					time.Sleep(10 * time.Microsecond) // let adds pile up while processing
				}

				mu.Lock()
				inFlight[item] = false
				mu.Unlock()
				if w%5 == 0 && gen%11 == 0 {
					q.AddRateLimited(item)
				} else {
					q.Forget(item)
				}
				if w%2 == 0 {
					q.DoneTicket(item, tk)
				} else {
					q.Done(item)
				}
			}
		})
	}

	var producersWG sync.WaitGroup
	for p := range producers {
		producersWG.Go(func() {
			for n := range addsEach {
				i := (n*7 + p*13) % keys
				added[i].Add(1)
				switch n % 4 {
				case 0:
					q.AddWithPriority(names[i], Low)
				case 1:
					q.AddAfter(names[i], time.Duration(n%3)*time.Microsecond)
				default:
					q.Add(names[i])
				}
			}
		})
	}
	producersWG.Wait()

	eventually(t, "every key to be processed after its last add", func() bool {
		for i := range keys {
			if processed[i].Load() < added[i].Load() {
				return false
			}
		}
		return true
	})
	q.ShutDown()
	workersWG.Wait()
	if violation.Load() {
		t.Fatal("an item was handed out to two workers at once")
	}
}

func TestShutDownUnblocksGet(t *testing.T) {
	q := New(Options[string]{})
	const workers = 4
	results := make(chan bool, workers)
	var started sync.WaitGroup
	for range workers {
		started.Add(1)
		go func() {
			started.Done()
			_, shutdown := q.Get()
			results <- shutdown
		}()
	}
	started.Wait()
	q.ShutDown()
	for range workers {
		select {
		case shutdown := <-results:
			if !shutdown {
				t.Fatal("Get returned an item after ShutDown of an empty queue")
			}
		case <-time.After(waitTimeout):
			t.Fatal("Get still blocked after ShutDown")
		}
	}
	if !q.ShuttingDown() {
		t.Fatal("ShuttingDown = false after ShutDown")
	}
	q.ShutDown() // idempotent
}

func TestShutDownDropsItemsAndIgnoresAdds(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	q := New(Options[string]{Clock: clk})
	q.Add("queued")
	q.AddAfter("delayed", time.Second)
	q.Add("processing")
	if got := get(t, q); got != "queued" {
		t.Fatalf("got %q, want queued", got)
	}
	q.Done("queued")
	if got := get(t, q); got != "processing" {
		t.Fatalf("got %q, want processing", got)
	}
	q.Add("queued")
	q.Add("processing") // dirty: would be requeued on Done without shutdown
	q.ShutDown()

	if item, shutdown := q.Get(); !shutdown {
		t.Fatalf("Get after ShutDown = %q, want shutdown", item)
	}
	q.Add("new")
	q.AddWithPriority("new", Low)
	q.AddAfter("new", 0)
	q.AddAfter("new", time.Second)
	q.AddRateLimited("new")
	q.Done("processing")
	clk.Step(time.Hour)
	if got := q.Len(); got != 0 {
		t.Fatalf("Len after ShutDown = %d, want 0", got)
	}
	if _, shutdown := q.Get(); !shutdown {
		t.Fatal("Get after ShutDown returned an item")
	}
}

func TestShutDownWithDrainWaitsForDone(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	q := New(Options[string]{Clock: clk})
	q.AddAfter("delayed", time.Minute) // starts the delay goroutine
	q.Add("a")
	q.Add("queued")
	a := get(t, q)

	returned := make(chan struct{})
	go func() {
		q.ShutDownWithDrain()
		close(returned)
	}()
	eventually(t, "ShuttingDown", q.ShuttingDown)
	if item, shutdown := q.Get(); !shutdown {
		t.Fatalf("Get during drain = %q, want shutdown", item)
	}
	select {
	case <-returned:
		t.Fatal("ShutDownWithDrain returned while an item was still processing")
	case <-time.After(5 * time.Millisecond):
	}
	q.Done(a)
	select {
	case <-returned:
	case <-time.After(waitTimeout):
		t.Fatal("ShutDownWithDrain did not return after the last Done")
	}
}

func TestShutDownEndsDrain(t *testing.T) {
	q := New(Options[string]{})
	q.Add("a")
	get(t, q)
	returned := make(chan struct{})
	go func() {
		q.ShutDownWithDrain()
		close(returned)
	}()
	eventually(t, "ShuttingDown", q.ShuttingDown)
	q.ShutDown()
	select {
	case <-returned:
	case <-time.After(waitTimeout):
		t.Fatal("ShutDown did not end a waiting ShutDownWithDrain")
	}
}

func TestShutDownWithDrainWithoutWork(t *testing.T) {
	q := New(Options[string]{})
	done := make(chan struct{})
	go func() {
		q.ShutDownWithDrain()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(waitTimeout):
		t.Fatal("ShutDownWithDrain blocked with nothing processing")
	}
}

// A stale Low slot can outlive every item; it must not be mistaken for (or
// crash on) an entry once the queue's storage was recycled.
func TestStaleLowSlotAfterQueueEmptied(t *testing.T) {
	q := newTestQueue(t, Options[string]{})
	const n = 2*arenaChunkLen + 3
	for i := range n {
		q.AddWithPriority(fmt.Sprint("old-", i), Low)
	}
	last := fmt.Sprint("old-", n-1)
	q.Add(last) // leaves a stale slot at the end of the Low FIFO
	got := drain(t, q)
	if len(got) != n || got[0] != last {
		t.Fatalf("drained %d items starting with %q, want %d starting with %q", len(got), got[0], n, last)
	}
	q.AddWithPriority("new", Low)
	q.AddWithPriority("newer", Low)
	want := []string{"new", "newer"}
	if got := drain(t, q); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// Done items stay in the map as idle, but never beyond the bound the
// package documents (about as many as live items, plus sweepMin), and an
// idle item added again is handed out again.
func TestIdleItemsAreBoundedAndRequeued(t *testing.T) {
	q := newTestQueue(t, Options[string]{})
	q.Add("held")
	if got := get(t, q); got != "held" { // one live item all along
		t.Fatalf("got %q, want held", got)
	}
	for i := range 5 * sweepMin {
		k := fmt.Sprint("k-", i)
		q.Add(k)
		item, tk, _ := q.GetTicket()
		if item != k {
			t.Fatalf("got %q, want %q", item, k)
		}
		q.DoneTicket(item, tk)
		q.mu.Lock()
		n, live := len(q.items), q.nLive
		q.mu.Unlock()
		if n > 2*live+sweepMin {
			t.Fatalf("after %d keys the map holds %d items for at most %d live ones, want at most %d", i+1, n, live, 2*live+sweepMin)
		}
	}
	// k-0 was swept, the last key is idle: both are handed out again.
	last := fmt.Sprint("k-", 5*sweepMin-1)
	q.Add("k-0")
	q.Add(last)
	if got := drain(t, q); !slices.Equal(got, []string{"k-0", last}) {
		t.Fatalf("got %v, want [k-0 %s]", got, last)
	}
	q.Done("held")
	// A burst larger than shrinkAfter is dropped as a whole once the
	// queue empties.
	for i := range 2 * shrinkAfter {
		q.Add(fmt.Sprint("burst-", i))
	}
	if got := len(drain(t, q)); got != 2*shrinkAfter {
		t.Fatalf("drained %d, want %d", got, 2*shrinkAfter)
	}
	q.mu.Lock()
	n, used := len(q.items), q.arena.used
	q.mu.Unlock()
	if n != 0 || used != 0 {
		t.Fatalf("after the burst: %d items in the map, %d arena entries used; want 0 and 0", n, used)
	}
}
