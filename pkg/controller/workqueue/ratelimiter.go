package workqueue

import (
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/util/workqueue"
)

// maxFailures saturates the per-item failure count so that an item failing
// forever can never overflow it; the delay is capped long before that.
const maxFailures = math.MaxInt32

// DefaultRateLimiter is the rate limiter a Queue uses when none is given:
// per-item exponential backoff from 5ms, capped at 2 minutes, with 10%
// jitter. Unlike client-go's default it has no overall token bucket, which
// would delay every retry behind a flood of unrelated ones, and its cap is
// short enough that a persistently failing object is retried every few
// minutes rather than every quarter of an hour.
func DefaultRateLimiter[T comparable]() workqueue.TypedRateLimiter[T] {
	return NewItemExponentialJitterRateLimiter[T](5*time.Millisecond, 2*time.Minute, 0.1)
}

// NewItemExponentialJitterRateLimiter returns a rate limiter that delays the
// n-th consecutive failure of an item (counting from 0) by base*2^n, capped
// at max, then multiplied by a random factor in [1-jitter, 1]. The jitter
// spreads retries of items that failed together (an API server outage) so
// they do not come back as a thundering herd; it only shortens delays, so
// max stays a hard cap. Forget resets an item; it never gives up on one.
//
// Out-of-range arguments are clamped rather than rejected: a negative base
// or max counts as 0, jitter is limited to [0, 1] (NaN counts as 0).
func NewItemExponentialJitterRateLimiter[T comparable](base, max time.Duration, jitter float64) workqueue.TypedRateLimiter[T] {
	if base < 0 {
		base = 0
	}
	if max < 0 {
		max = 0
	}
	if !(jitter > 0) { // also catches NaN
		jitter = 0
	} else if jitter > 1 {
		jitter = 1
	}
	return &jitterLimiter[T]{
		failures: make(map[T]int),
		base:     base,
		max:      max,
		jitter:   jitter,
	}
}

// jitterLimiter implements NewItemExponentialJitterRateLimiter.
type jitterLimiter[T comparable] struct {
	mu       sync.Mutex
	failures map[T]int
	// tracked mirrors len(failures) so that Forget, which workers call after
	// every successful item, skips the lock while nothing is failing.
	tracked atomic.Int64

	base, max time.Duration
	jitter    float64
}

// When records a failure of item and returns how long to wait before
// retrying it.
func (r *jitterLimiter[T]) When(item T) time.Duration {
	r.mu.Lock()
	n, ok := r.failures[item]
	if !ok {
		r.tracked.Add(1)
	}
	if n < maxFailures {
		r.failures[item] = n + 1
	}
	r.mu.Unlock()
	return r.delay(n)
}

// delay computes the jittered backoff for the n-th failure without ever
// overflowing: once base*2^n would pass max, max is used.
func (r *jitterLimiter[T]) delay(n int) time.Duration {
	d := r.max
	if n < 63 && r.base <= r.max>>uint(n) {
		d = r.base << uint(n)
	}
	if r.jitter > 0 && d > 0 {
		// rand.Float64 is in [0, 1), so the factor is in (1-jitter, 1].
		// Compare in float64 before converting back: near MaxInt64 the
		// product can round up past what a Duration holds.
		if f := float64(d) * (1 - r.jitter*rand.Float64()); f < float64(r.max) {
			d = time.Duration(f)
		} else {
			d = r.max
		}
	}
	return min(max(d, 0), r.max)
}

// NumRequeues returns how many failures of item were recorded since it was
// last forgotten.
func (r *jitterLimiter[T]) NumRequeues(item T) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failures[item]
}

// Forget resets item's backoff.
func (r *jitterLimiter[T]) Forget(item T) {
	if r.tracked.Load() == 0 {
		return
	}
	r.mu.Lock()
	if _, ok := r.failures[item]; ok {
		delete(r.failures, item)
		r.tracked.Add(-1)
	}
	r.mu.Unlock()
}
