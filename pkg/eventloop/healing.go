package eventloop

import (
	"context"
	"errors"
	"fmt"
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

// react decides what the event's end means for the loop: an abort after a
// fatal error (or too many failed after-error healings), a healing resync
// after another failure, unless the loop is stopping, and the end of the
// failed healings' count after a successful after-error healing.
func (l *Loop) react(r *eventRun, evErr error) {
	ev := r.it.ev
	switch {
	case r.fatal != nil:
		l.abort(evErr)
	case evErr != nil && l.stopping(r):
		// No healing would run: this is the loop's last event.
		entry := l.log.WithError(evErr).WithField("event", r.rec.Name)
		if errors.Is(evErr, context.Canceled) {
			// The closing itself cut the event short (its transaction
			// context was cancelled): expected, not a failure.
			entry.Debug("eventloop: event cut short by the closing of the loop")
		} else {
			entry.Warn("eventloop: event failed while the loop was stopping; it will not be healed")
		}
	case l.needsHealing(r, evErr):
		if h, ok := ev.(*HealingResync); ok && h.Type == AfterError {
			l.setFailedHealings(l.heal.failed + 1)
			if l.heal.failed >= l.cfg.MaxFailedHealings {
				l.abort(NewFatalError(fmt.Errorf("after-error healing failed %d times in a row, the last time with: %w (it was healing: %v)",
					l.heal.failed, evErr, h.Error)))
				return
			}
		}
		l.scheduleHealing(evErr)
	case evErr == nil:
		if h, ok := ev.(*HealingResync); ok && h.Type == AfterError {
			l.setFailedHealings(0)
		}
	}
}

// stopping reports whether the loop stops after r: r is a Shutdown, or
// the loop is being closed (Close, or the end of Start's context).
func (l *Loop) stopping(r *eventRun) bool {
	return r.it.kind == kindShutdown || l.stopFlag.Load() || l.ctx.Err() != nil
}

// needsHealing decides whether a failed event leaves the system in a state
// that only a resync can repair.
func (l *Loop) needsHealing(r *eventRun, evErr error) bool {
	switch {
	case evErr == nil:
		return false
	case r.method.IsResync():
		return true // Contiv forgot failed resyncs
	case r.txnType == BestEffortIgnoreErrors:
		return false
	case r.txnType == RevertOnFailure:
		return r.aborted || !r.reverted
	}
	return true
}
