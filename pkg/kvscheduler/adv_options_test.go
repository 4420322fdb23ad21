package kvscheduler_test

import (
	"sync"
	"testing"
	"time"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"k8s.io/utils/clock"
)

// Options.HistoryTrimPeriod: "0 means one minute"; a negative period was
// neither rejected nor defaulted. The trim timer was armed with it, fired
// at once, and re-armed itself from a new goroutine at once, for ever: a
// busy loop for the scheduler's whole life. New now refuses it.

// advCountingClock records the delays the scheduler arms timers with.
type advCountingClock struct {
	clock.RealClock
	mu     sync.Mutex
	delays []time.Duration
}

func (c *advCountingClock) AfterFunc(d time.Duration, f func()) clock.Timer {
	c.mu.Lock()
	c.delays = append(c.delays, d)
	c.mu.Unlock()
	return c.RealClock.AfterFunc(d, f)
}

func (c *advCountingClock) armed() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.delays)
}

func TestAdvNegativeHistoryTrimPeriodDoesNotSpin(t *testing.T) {
	clk := &advCountingClock{}
	s, err := kvscheduler.New(kvscheduler.Options{Clock: clk, HistoryTrimPeriod: -time.Second})
	if err != nil {
		return // rejected: fine
	}
	defer func() { _ = s.Close() }()
	// New arms the trim timer before it returns.
	clk.mu.Lock()
	delays := append([]time.Duration(nil), clk.delays...)
	clk.mu.Unlock()
	for _, d := range delays {
		if d <= 0 {
			t.Errorf("a timer is armed with %v (it fires at once and re-arms itself: %d times so far)", d, clk.armed())
			break
		}
	}
}
