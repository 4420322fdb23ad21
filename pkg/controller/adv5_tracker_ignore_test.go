package controller

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"
	kruntime "k8s.io/apimachinery/pkg/runtime"
)

// TestAdv5ATrackerDonePanicAfterErrIgnoreIsNotSwallowed (issue 30, h30d's
// attack on h30b's recovery of a PassTracker's panics): docs/core.md says
// a panic of the done a PassTracker returned becomes the pass's error,
// retried with backoff. h30b joins it into the handler's error; when the
// handler returned ErrIgnore ("do not retry and do not report"), the
// joined error still is ErrIgnore, so the pass is forgotten: the panic is
// neither retried nor logged, and nothing anywhere says that user code
// panicked.
func TestAdv5ATrackerDonePanicAfterErrIgnoreIsNotSwallowed(t *testing.T) {
	var dones, passes atomic.Int32
	tracker := adv4Tracker(func() func() {
		return func() {
			if dones.Add(1) == 1 {
				panic("the tracker's done of the first pass panics")
			}
		}
	})
	sentinel := newAdv5Sentinel()
	c, _, _ := adv5DeletingController(t, &Options{Passes: tracker, Resource: adv4Resource, RateLimiter: &adv5Retry{delay: 50 * time.Millisecond}}, func(key string, obj kruntime.Object) error {
		sentinel.seen(key)
		if key == "ns/k" && obj != nil {
			passes.Add(1)
			return ErrIgnore
		}
		return nil
	})
	hook := logtest.NewLocal(c.log.(*logrus.Entry).Logger)
	if err := c.Start(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	adv5WaitFor(t, "the first pass's done (which panics)", func() bool { return dones.Load() >= 1 })
	adv5WaitFor(t, "the first pass to end (its worker released)", func() bool { return !adv5Busy(c) })
	// Due long after any retry the pass could have asked for.
	sentinel.after(t, c, time.Second)
	for _, e := range hook.AllEntries() {
		if strings.Contains(e.Message, "panicked") && e.Level <= logrus.WarnLevel {
			return
		}
	}
	t.Fatalf("the tracker's done panicked after a pass whose handler returned ErrIgnore, and nothing said so: no warning or error line names the panic (%d log lines), and the key ran %d times (no retry)", len(hook.AllEntries()), passes.Load())
}
