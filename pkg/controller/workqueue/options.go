package workqueue

import (
	"time"

	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
)

// Priority orders ready items: every ready High item is handed out before
// any Low item, so that real changes are not stuck behind a resync.
type Priority int

const (
	// Low is for work that is probably a no-op: the informer's initial list
	// and periodic resyncs. It must not delay reactions to real changes.
	Low Priority = iota
	// High is for work that reflects a change: watch events, explicit
	// enqueues and retries (including delayed items when they become ready).
	High
)

// String makes priorities readable in logs and test failures.
func (p Priority) String() string {
	switch normalize(p) {
	case High:
		return "High"
	default:
		return "Low"
	}
}

// normalize maps any value to a defined priority instead of rejecting it, so
// a caller's arithmetic mistake degrades ordering rather than crashing a
// controller: anything at or above High is High, everything else is Low.
func normalize(p Priority) Priority {
	if p >= High {
		return High
	}
	return Low
}

// Options configures a Queue. The zero value is usable: it gives the default
// rate limiter, the real clock and no metrics.
type Options[T comparable] struct {
	// RateLimiter decides how long AddRateLimited waits before an item is
	// retried; nil means DefaultRateLimiter[T](). It is shared with Forget
	// and NumRequeues, so it must be safe for concurrent use.
	RateLimiter workqueue.TypedRateLimiter[T]
	// Clock is the time source for delays and metrics; nil means the real
	// clock. Tests inject k8s.io/utils/clock/testing.FakeClock to drive
	// delays without sleeping.
	Clock clock.WithTicker
	// Metrics receives queue events; nil disables them, which also skips
	// reading the clock on the hot path.
	Metrics Metrics
}

// Metrics lets the controller feed its metrics system (Prometheus) without
// this package importing one. Hooks may be called concurrently and some are
// called while the queue's lock is held, so they must be fast, safe for
// concurrent use, and must never call back into the Queue.
type Metrics interface {
	// Added is called for every accepted add, including adds that were
	// deduplicated and delayed items becoming ready (at High priority);
	// adds after shutdown are not counted.
	Added(p Priority)
	// Depth reports the number of items ready to be handed out after each
	// change to it; it is called under the queue's lock so values arrive in
	// order and a gauge set from them is never stale.
	Depth(n int)
	// Waited reports how long an item waited between its first add (or
	// becoming ready, for a delayed item) and Get handing it out.
	Waited(d time.Duration)
	// Retried is called for every AddRateLimited call accepted before
	// shutdown.
	Retried()
}
