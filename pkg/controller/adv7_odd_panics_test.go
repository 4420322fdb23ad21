package controller

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	kruntime "k8s.io/apimachinery/pkg/runtime"
)

// TestAdv7APanicWhoseStringPanicsAgainDoesNotKillTheProcess (issue 30,
// h30g): the recover of a handler's panic formats the panic's value
// (fmt's %v) into the pass's error. fmt recovers a panic of the value's
// String method and prints it, but a second panic while it prints the
// first (a String method that panics with a value of its own type) is
// panicked again by fmt: it escapes the recover's deferred function and
// the worker's goroutine, and ends the process. The same formatting
// recovers a Gate's, a PassTracker's, a HeldDeletion's and a rate
// limiter's panics. Fixed (h30h): every recover of pkg/controller and
// pkg/cache formats the value with internal/panicvalue, which falls back
// to the value's type.
func TestAdv7APanicWhoseStringPanicsAgainDoesNotKillTheProcess(t *testing.T) {
	adv4InChild(t, "TestAdv7APanicWhoseStringPanicsAgainDoesNotKillTheProcess", func(t *testing.T) {
		adv7PanicIsRetried(t, adv7Bomb{})
	})
}

// TestAdv7AHandlerPanicWithAnOddValueIsRecoveredAndRetried (issue 30,
// h30g; held): a handler panics on its first pass of ns/k with nil (a
// *runtime.PanicNilError since Go 1.21), an error, a runtime.Error (a
// write to a nil map), a value whose String method panics once, and a
// nil pointer whose String method dereferences it: each is recovered,
// the worker lives on, and ns/k is retried.
func TestAdv7AHandlerPanicWithAnOddValueIsRecoveredAndRetried(t *testing.T) {
	adv4InChild(t, "TestAdv7AHandlerPanicWithAnOddValueIsRecoveredAndRetried", func(t *testing.T) {
		var nilPtr *adv7NilStringer
		for _, v := range []any{nil, errors.New("an error"), adv7RuntimeError(), adv7OnceBomb{}, nilPtr} {
			adv7PanicIsRetried(t, v)
		}
	})
}

// adv7PanicIsRetried runs a controller whose handler panics with v on
// its first pass of ns/k, and waits for ns/k's retry and a later pass of
// the sentinel ns/s.
func adv7PanicIsRetried(t *testing.T, v any) {
	t.Helper()
	var passes atomic.Int32
	sentinel := newAdv5Sentinel()
	c, _, _ := adv5DeletingController(t, &Options{RateLimiter: &adv5Retry{delay: 10 * time.Millisecond}}, func(key string, obj kruntime.Object) error {
		sentinel.seen(key)
		if key == "ns/k" && passes.Add(1) == 1 {
			panic(v)
		}
		return nil
	})
	if err := c.Start(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	adv5WaitFor(t, fmt.Sprintf("ns/k's retry after a panic with a %T", v), func() bool { return passes.Load() >= 2 })
	adv7SentinelWithin(t, sentinel, c, 0, 20*time.Second, "after a panic with a %T", v)
}

// adv7Bomb's String panics with another adv7Bomb: fmt, printing the
// first panic, meets the second.
type adv7Bomb struct{}

func (adv7Bomb) String() string { panic(adv7Bomb{}) }

// adv7OnceBomb's String panics with a plain string.
type adv7OnceBomb struct{}

func (adv7OnceBomb) String() string { panic("the panic value's String panics") }

// adv7NilStringer's String reads its receiver.
type adv7NilStringer struct{ s string }

func (n *adv7NilStringer) String() string { return n.s }

// adv7RuntimeError returns the runtime.Error of a write to a nil map.
func adv7RuntimeError() (r any) {
	defer func() { r = recover() }()
	var m map[string]int
	m["x"] = 1
	return nil
}
