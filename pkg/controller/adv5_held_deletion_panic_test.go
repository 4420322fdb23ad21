package controller

import (
	"sync/atomic"
	"testing"

	kruntime "k8s.io/apimachinery/pkg/runtime"
)

// TestAdv5AHeldDeletionThatPanicsDoesNotKillTheProcess (issue 30, h30d's
// attack on h30b's recovery of user code's panics): Options.HeldDeletion
// is user code too (a sharded kind's judge of a deleted object's final
// labels), called by the controller's event handler on every deletion
// event, outside any pass and without the recovery h30b gave a Gate, a
// PassTracker and a rate limiter. Its panic escapes into the informer's
// goroutine, whose crash handler re-panics: the process ends, and the
// deletion it was judging never reaches the handlers. Run in a child
// process (adv4InChild) so that the crash fails this test with its message.
func TestAdv5AHeldDeletionThatPanicsDoesNotKillTheProcess(t *testing.T) {
	adv4InChild(t, "TestAdv5AHeldDeletionThatPanicsDoesNotKillTheProcess", func(t *testing.T) {
		var deletions atomic.Int32
		held := func(map[string]string) bool { panic("HeldDeletion panics") }
		c, fw, cm := adv5DeletingController(t, &Options{HeldDeletion: held}, func(key string, obj kruntime.Object) error {
			if key == "ns/k" && obj == nil {
				deletions.Add(1)
			}
			return nil
		})
		if err := c.Start(t.Context(), 1); err != nil {
			t.Fatal(err)
		}
		adv5WaitFor(t, "ns/k's first pass", func() bool { return c.known.has("ns/k") })
		fw.Delete(cm)
		adv5WaitFor(t, "the handler to be told ns/k is gone", func() bool { return deletions.Load() >= 1 })
	})
}
