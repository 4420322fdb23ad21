// Package workqueue is the work queue behind lariat's controllers: a
// drop-in replacement for client-go's rate-limiting workqueue that adds two
// priorities.
//
// # Why it exists
//
// A controller that starts (or resyncs) lists every object it watches and
// enqueues all of them. With client-go's workqueue, which has no notion of
// priority, a watch event that arrives during that flood waits behind
// thousands of keys that most likely need no work, so the controller reacts
// to real changes minutes late on large clusters. controller-runtime solves
// this with its priorityqueue, but importing it would pull controller-runtime
// (and its dependency tree and release cadence) into the framework's module,
// and it hands items out through extra goroutines and a B-tree, which makes
// plain dispatch slower than client-go's queue. Measured with one million
// keys and two workers (scripts/bench/queue, docs/benchmarks.md): this queue
// 0.41-0.53 s, client-go's 0.66-0.81 s, controller-runtime's priorityqueue
// 3.8-4.8 s; so a queue of our own is both the faster and the lighter
// choice. This package keeps client-go's
// semantics and API shape (Queue satisfies client-go's
// TypedRateLimitingInterface) and adds exactly what controllers need: watch
// events, explicit enqueues and retries at High priority; the initial list
// and periodic resyncs at Low priority.
//
// # Guarantees
//
// Fair: items are handed out first-in first-out within one priority, and
// every ready High item is handed out before any Low item.
//
// Stingy: an item is never handed out to two workers at once. An item added
// several times before it is handed out is handed out once. An item added
// while it is being processed (between Get and Done) is remembered as dirty
// and queued again when Done is called, so no event is lost and no item is
// processed concurrently with itself.
//
// Priority upgrade: adding at High an item that waits at Low moves it to the
// back of the High queue; its first-add time is kept for metrics. Adding at
// Low an item that waits at High leaves it at High: priorities only go up
// until the item is handed out. An item that is re-added while it is being
// processed is queued on Done at the highest priority it was added with in
// the meantime.
//
// Delays: AddAfter makes an item ready after a delay (a delay <= 0 means
// now). If the item already waits for a delay, the earliest ready time wins,
// as in client-go. A delayed item that becomes ready is added at High
// priority, because delays are used for retries and explicit requeues, which
// are real work rather than a resync. All delays are served by a single
// goroutine per queue (a min-heap and one timer), started on the first
// delayed add, never one goroutine per item. The clock is injectable so that
// tests can drive delays with a fake clock.
//
// Retries never stop: AddRateLimited always re-adds the item, only later.
// The default rate limiter backs off exponentially per item with jitter and
// a cap, and forgets an item's history on Forget.
//
// Shutdown: ShutDown makes Get return shutdown=true at once, also for workers
// already blocked in Get; items still waiting in the queue or for a delay are
// dropped, and adds after shutdown are ignored. ShutDownWithDrain does the
// same and then waits until every item handed out has been passed to Done.
// Note that this differs from client-go, whose Get keeps handing out the
// items left in the queue after ShutDown: a stopping controller should stop,
// not work through a backlog that the next leader will list again anyway.
//
// All methods are safe for concurrent use by many producers and workers.
//
// # Performance
//
// The hot path (Add, Get and Done of ready items) takes one mutex per call
// and is O(1): queued items live in two FIFOs made of fixed-size chunks, and
// per-item state lives in a pointer-free arena indexed from one map, so Get
// needs no map lookup, and the garbage collector scans little. Add looks
// the item up, and inserts it unless the queue knows it already; Done (by
// the Ticket GetTicket returned) touches no map: a done item stays in the
// map as idle, and idle items are swept out in bulk only when the map would
// otherwise outgrow its table while half of it is idle, or dropped with
// the map when the queue empties after a burst. With a million keys each map access is a cache
// miss, so this halves them. Steady-state dispatch does not allocate per
// item, and memory taken by a burst (a resync of a large cluster) is
// released once the queue empties; until then the map holds at most
// about twice as many items as are live, plus a thousand (a queue that
// empties after a smaller burst keeps its few thousand idle items, as it
// keeps their table). Workers that find the queue
// empty block on a condition variable; no goroutine is started per item.
package workqueue
