package controller

import (
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"
	clientworkqueue "k8s.io/client-go/util/workqueue"

	"github.com/lariat-dev/lariat/internal/panicvalue"
	"github.com/lariat-dev/lariat/pkg/controller/workqueue"
)

// safeLimiter is a user's rate limiter (Options.RateLimiter) whose panics
// are recovered, logged with the key, and answered by a default limiter
// instead: the limiter is called by the workers, in every failed pass
// (When, NumRequeues) and every successful one (Forget), and a panic
// escaping a worker would end the process. A key whose When panicked is
// still retried, with the default backoff, as a handler's error is.
type safeLimiter struct {
	user     clientworkqueue.TypedRateLimiter[string]
	fallback clientworkqueue.TypedRateLimiter[string]
	log      logrus.FieldLogger
	// fellBack is set once the fallback answered: until then a Forget
	// need not take the fallback's lock, which every successful pass
	// would.
	fellBack atomic.Bool
}

// newSafeLimiter wraps user, logging its panics to log.
func newSafeLimiter(user clientworkqueue.TypedRateLimiter[string], log logrus.FieldLogger) *safeLimiter {
	return &safeLimiter{user: user, fallback: workqueue.DefaultRateLimiter[string](), log: log}
}

// When implements TypedRateLimiter.
func (l *safeLimiter) When(key string) (d time.Duration) {
	defer l.recover(key, "When", func() { d = l.fallback.When(key) })
	return l.user.When(key)
}

// Forget implements TypedRateLimiter. The fallback forgets too, once it
// answered: it counts only the retries whose When panicked.
func (l *safeLimiter) Forget(key string) {
	if l.fellBack.Load() {
		l.fallback.Forget(key)
	}
	defer l.recover(key, "Forget", func() {})
	l.user.Forget(key)
}

// NumRequeues implements TypedRateLimiter.
func (l *safeLimiter) NumRequeues(key string) (n int) {
	defer l.recover(key, "NumRequeues", func() { n = l.fallback.NumRequeues(key) })
	return l.user.NumRequeues(key)
}

// afterExit answers for a key whose pass ended its worker's goroutine
// (runtime.Goexit), from the fallback alone: the user's limiter may be
// what called Goexit, and calling it again from the worker's deferred
// step would end that step before it starts the worker's replacement.
func (l *safeLimiter) afterExit(key string) (retries int, wait time.Duration) {
	l.fellBack.Store(true) // so that the key's Forget forgets it too
	return l.fallback.NumRequeues(key), l.fallback.When(key)
}

// recover, deferred, turns a panic of the user's method into an error
// line naming the key and then calls instead.
func (l *safeLimiter) recover(key, method string, instead func()) {
	if r := recover(); r != nil {
		l.fellBack.Store(true)
		l.log.WithField("key", key).Errorf("rate limiter's %s panicked: %s\n%s", method, panicvalue.String(r), debug.Stack())
		instead()
	}
}
