package eventloop

import (
	"time"

	"k8s.io/utils/clock"
)

// healing is the state of after-error healing, owned by the loop goroutine.
type healing struct {
	timer   clock.Timer // armed while a healing is pending
	cause   error       // the error the pending healing is to heal
	next    time.Duration
	lastRun time.Time // when the last after-error healing started
	failed  int       // after-error healings that failed in a row
}

// scheduleHealing arms an after-error healing resync, unless one is already
// pending. The delay starts at DelayAfterErrorHealing and doubles for every
// healing scheduled within MaxAfterErrorHealingDelay of the previous one (an
// error that keeps coming back must not make the loop resync in a tight
// loop), capped at MaxAfterErrorHealingDelay; after a quiet period that long
// it starts again from the beginning.
func (l *Loop) scheduleHealing(cause error) {
	if l.heal.timer != nil {
		return
	}
	now := l.clock.Now()
	base, maxDelay := l.cfg.DelayAfterErrorHealing.Duration, l.cfg.MaxAfterErrorHealingDelay.Duration
	if l.heal.next == 0 || (!l.heal.lastRun.IsZero() && now.Sub(l.heal.lastRun) > maxDelay) {
		l.heal.next = base
	}
	delay := l.heal.next
	l.heal.next = min(2*delay, maxDelay)
	if l.heal.next == 0 {
		l.heal.next = min(time.Second, maxDelay)
	}
	l.heal.cause = cause
	l.heal.timer = l.clock.NewTimer(delay)
	l.statusMu.Lock()
	l.healingDue = now.Add(delay)
	l.statusMu.Unlock()
	l.log.WithError(cause).WithField("delay", delay).Warn("eventloop: event failed; after-error healing resync scheduled")
}

func (l *Loop) cancelHealing() {
	stopTimer(&l.heal.timer)
	l.statusMu.Lock()
	l.healingDue = time.Time{}
	l.statusMu.Unlock()
}

// onHealingTimer runs the pending after-error healing.
func (l *Loop) onHealingTimer() {
	cause := l.heal.cause
	l.heal.timer, l.heal.cause = nil, nil
	l.statusMu.Lock()
	l.healingDue = time.Time{}
	l.statusMu.Unlock()
	// Recorded before processing: a healing that fails schedules the next
	// one from within process, which must see this run as the last one.
	l.heal.lastRun = l.clock.Now()
	l.process(queued{ev: &HealingResync{Type: AfterError, Error: cause}})
}

// onPeriodicTimer runs a periodic healing (a DownstreamResync).
func (l *Loop) onPeriodicTimer() {
	// Re-armed first, so that the period does not drift by the processing
	// time (and an abort during processing finds it to stop).
	l.timers.periodic = l.clock.NewTimer(l.cfg.PeriodicHealingInterval.Duration)
	l.process(queued{ev: &HealingResync{Type: Periodic}})
}

// setFailedHealings records the count of after-error healings that failed in
// a row, for Status.
func (l *Loop) setFailedHealings(n int) {
	l.heal.failed = n
	l.statusMu.Lock()
	l.failedHealings = n
	l.statusMu.Unlock()
}
