package queue

import (
	"time"

	"k8s.io/client-go/util/workqueue"

	// lasso has no queue of its own: its controllers run client-go's
	// workqueue with keys boxed in `any` and the rate limiter built in
	// newLassoQueue. Importing its controller package keeps this module on
	// lasso's latest release and checks that it builds against the same
	// client-go and controller-runtime as the other queues.
	_ "github.com/rancher/lasso/pkg/controller"
)

// newLassoQueue builds the queue the way lasso's controller does
// (pkg/controller/controller.go: applyDefaultOptions and run), without a
// name so that metrics are off as for the other queues.
func newLassoQueue() *lassoQueue {
	limiter := workqueue.NewTypedMaxOfRateLimiter[any](
		workqueue.NewTypedItemFastSlowRateLimiter[any](time.Millisecond, 2*time.Minute, 30),
		workqueue.NewTypedItemExponentialFailureRateLimiter[any](5*time.Millisecond, 30*time.Second),
	)
	return &lassoQueue{workqueue.NewTypedRateLimitingQueueWithConfig(limiter, workqueue.TypedRateLimitingQueueConfig[any]{})}
}

// lassoQueue adapts lasso's any-typed queue to the benchmark's string keys;
// the boxing it does is what lasso's controllers pay as well.
type lassoQueue struct {
	workqueue.TypedRateLimitingInterface[any]
}

func (q *lassoQueue) Get() (string, bool) {
	item, shutdown := q.TypedRateLimitingInterface.Get()
	key, _ := item.(string)
	return key, shutdown
}

func (q *lassoQueue) Done(item string)   { q.TypedRateLimitingInterface.Done(item) }
func (q *lassoQueue) Forget(item string) { q.TypedRateLimitingInterface.Forget(item) }
func (q *lassoQueue) add(item string)    { q.TypedRateLimitingInterface.Add(item) }
