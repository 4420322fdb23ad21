package workqueue

import (
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"k8s.io/client-go/util/workqueue"
)

// dispatchQueue is the part of a work queue the dispatch benchmark drives.
type dispatchQueue interface {
	Add(item string)
	Get() (string, bool)
	Done(item string)
	Forget(item string)
	ShutDown()
}

// ticketQueue drives a Queue the way pkg/controller does: each hand-out
// is ended by its ticket (GetTicket, DoneTicket) rather than by the item.
type ticketQueue struct{ *Queue[string] }

// benchKeys returns n distinct keys shaped like namespace/name, built before
// the timer starts so that only the queue is measured.
func benchKeys(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = "namespace-" + strconv.Itoa(i%97) + "/object-" + strconv.Itoa(i)
	}
	return keys
}

// runDispatch adds every key from one producer and consumes them with
// workers goroutines running a no-op handler, returning when all keys were
// processed.
func runDispatch(q dispatchQueue, keys []string, workers int) {
	var (
		done atomic.Int64
		wg   sync.WaitGroup
	)
	total := int64(len(keys))
	for range workers {
		wg.Go(func() {
			for {
				var (
					item     string
					shutdown bool
				)
				if tq, ok := q.(ticketQueue); ok {
					var t Ticket
					item, t, shutdown = tq.GetTicket()
					if !shutdown {
						tq.DoneTicket(item, t)
					}
				} else if item, shutdown = q.Get(); !shutdown {
					q.Done(item)
				}
				if shutdown {
					return
				}
				q.Forget(item)
				if done.Add(1) == total {
					q.ShutDown()
				}
			}
		})
	}
	for _, k := range keys {
		q.Add(k)
	}
	wg.Wait()
}

// BenchmarkDispatch compares dispatch throughput with client-go's
// rate-limiting queue: one op is one distinct key added, handed out, done and
// forgotten.
func BenchmarkDispatch(b *testing.B) {
	impls := []struct {
		name string
		new  func() dispatchQueue
	}{
		{"lariat", func() dispatchQueue { return New(Options[string]{}) }},
		{"lariat-ticket", func() dispatchQueue { return ticketQueue{New(Options[string]{})} }},
		{"client-go", func() dispatchQueue {
			return workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
		}},
	}
	for _, workers := range []int{2, 8} {
		for _, impl := range impls {
			b.Run("workers="+strconv.Itoa(workers)+"/"+impl.name, func(b *testing.B) {
				keys := benchKeys(b.N)
				q := impl.new()
				b.ReportAllocs()
				b.ResetTimer()
				runDispatch(q, keys, workers)
			})
		}
	}
}
