package eventloop

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"k8s.io/utils/clock"
)

// historyTrimPeriod is how often records older than the age limit are
// dropped (as in Contiv); the count bound is enforced on every record.
const historyTrimPeriod = time.Minute

// timerPollEvery is how many consecutive events the loop processes before it
// looks at its timers again while busy: checking them before every event
// would cost a select per event, and a timer firing a few events late does
// not matter.
const timerPollEvery = 32

// timers are the loop's timers; nil when not armed. Timers rather than
// tickers, because fake clocks cannot stop tickers.
type timers struct {
	startup  clock.Timer
	periodic clock.Timer
	trim     clock.Timer
}

func timerC(t clock.Timer) <-chan time.Time {
	if t == nil {
		return nil
	}
	return t.C()
}

func stopTimer(t *clock.Timer) {
	if *t != nil {
		(*t).Stop()
		*t = nil
	}
}

// run is the loop goroutine.
func (l *Loop) run() {
	defer close(l.exited)
	defer l.finish()
	l.log.Debug("eventloop: started")
	for {
		if l.stopFlag.Load() {
			return
		}
		// Timers are only served between "families" of events: a healing
		// must not come between an event and its follow-ups.
		if l.fuLen() == 0 && l.iter%timerPollEvery == 0 {
			if l.wait(false) {
				return
			}
		}
		l.iter++
		if it, ok := l.next(); ok {
			if l.dispatch(it) {
				return
			}
			continue
		}
		l.iter = 0
		if l.wait(true) {
			return
		}
	}
}

// wait serves timers and stop requests; with block it also sleeps until an
// event arrives. It reports whether the loop must exit.
func (l *Loop) wait(block bool) (exit bool) {
	notify := l.q.notify
	if !block {
		notify = nil
	}
	var (
		startupC  = timerC(l.timers.startup)
		periodicC = timerC(l.timers.periodic)
		trimC     = timerC(l.timers.trim)
		healC     = timerC(l.heal.timer)
	)
	if block {
		select {
		case <-l.stopCh:
			return true
		case <-l.ctx.Done():
			return true
		case <-notify:
		case <-startupC:
			l.onStartupDeadline()
		case <-healC:
			l.onHealingTimer()
		case <-periodicC:
			l.onPeriodicTimer()
		case <-trimC:
			l.onTrimTimer()
		}
		return false
	}
	select {
	case <-l.stopCh:
		return true
	case <-l.ctx.Done():
		return true
	case <-startupC:
		l.onStartupDeadline()
	case <-healC:
		l.onHealingTimer()
	case <-periodicC:
		l.onPeriodicTimer()
	case <-trimC:
		l.onTrimTimer()
	default:
	}
	return false
}

func (l *Loop) fuLen() int { return len(l.followUps) - l.fuHead }

// next returns the next event to process: pending follow-ups first, then the
// queue; before the startup resync only the resync (or a Shutdown) may leave
// the queue, the others stay there, held in arrival order.
func (l *Loop) next() (queued, bool) {
	if l.fuLen() > 0 {
		it := l.followUps[l.fuHead]
		l.followUps[l.fuHead] = queued{}
		l.fuHead++
		if l.fuHead == len(l.followUps) {
			l.followUps, l.fuHead = l.followUps[:0], 0
		}
		return it, true
	}
	q := l.q
	q.mu.Lock()
	defer q.mu.Unlock()
	n := q.lenLocked()
	if l.ready || l.aborted != nil {
		if n == 0 {
			q.waiting = true
			return queued{}, false
		}
		return q.removeLocked(0), true
	}
	for i := 0; i < n; i++ {
		if k := q.items[q.head+i].kind; k == kindStartup || k == kindShutdown {
			return q.removeLocked(i), true
		}
	}
	q.waiting = true
	return queued{}, false
}

// dispatch processes one event and reports whether the loop must exit.
func (l *Loop) dispatch(it queued) (exit bool) {
	if l.aborted != nil {
		l.reject(it.ev, l.aborted)
		return it.kind == kindShutdown
	}
	if !l.ready {
		if it.kind == kindShutdown {
			// Handlers that never resynced have nothing to clean up.
			l.callDone(it.ev, nil)
			return true
		}
		l.ready = true
		l.readyFlag.Store(true)
		stopTimer(&l.timers.startup)
		if l.cfg.EnablePeriodicHealing {
			l.timers.periodic = l.clock.NewTimer(l.cfg.PeriodicHealingInterval.Duration)
		}
		l.setState(StateRunning)
	}
	l.process(it)
	return it.kind == kindShutdown
}

// onStartupDeadline aborts the loop if the startup resync has not arrived.
func (l *Loop) onStartupDeadline() {
	l.timers.startup = nil
	if l.ready {
		return
	}
	if l.waitingFor != nil {
		if waiting := l.waitingFor(); len(waiting) > 0 {
			err := fmt.Errorf("%w: no startup resync within %v: waiting for %s", ErrStartupResyncDeadline,
				l.cfg.StartupResyncDeadline.Duration, strings.Join(waiting, ", "))
			l.log.WithError(err).Error("eventloop: the startup resync is late; waiting for its input, events stay held")
			l.statusMu.Lock()
			l.overdue = err
			l.statusMu.Unlock()
			l.timers.startup = l.clock.NewTimer(l.cfg.StartupResyncDeadline.Duration)
			return
		}
	}
	l.abort(fmt.Errorf("%w: no startup resync within %v", ErrStartupResyncDeadline, l.cfg.StartupResyncDeadline.Duration))
}

func (l *Loop) onTrimTimer() {
	l.timers.trim = l.clock.NewTimer(historyTrimPeriod)
	l.hist.trim(l.clock.Now())
}

// abort stops event processing for good: health turns bad, and every event
// waiting or arriving later fails with an error wrapping ErrAborted and
// cause.
func (l *Loop) abort(cause error) {
	if l.aborted != nil {
		return
	}
	err := fmt.Errorf("%w: %w", ErrAborted, cause)
	l.aborted = err
	l.log.WithError(cause).Error("eventloop: aborting; every further event fails")
	stopTimer(&l.timers.startup)
	stopTimer(&l.timers.periodic)
	l.cancelHealing()
	l.statusMu.Lock()
	l.state, l.abortErr = StateAborted, err
	l.statusMu.Unlock()
	close(l.unhealthy)

	l.q.mu.Lock()
	l.q.err = err
	items := l.q.takeAllLocked()
	l.q.mu.Unlock()
	l.rejectAll(items, err)
}

// rejectAll fails the pending follow-ups, then items, in processing order.
func (l *Loop) rejectAll(items []queued, err error) {
	fus := l.followUps[l.fuHead:]
	l.followUps, l.fuHead = nil, 0
	for _, it := range fus {
		l.reject(it.ev, err)
	}
	for _, it := range items {
		l.reject(it.ev, err)
	}
}

// finish runs when the loop stops: every event still waiting gets
// Done(ErrClosed), nothing more is accepted, and the timers and the
// transaction context are released.
func (l *Loop) finish() {
	stopTimer(&l.timers.startup)
	stopTimer(&l.timers.periodic)
	stopTimer(&l.timers.trim)
	l.cancelHealing()
	l.q.mu.Lock()
	l.q.err = ErrClosed
	items := l.q.takeAllLocked()
	l.q.mu.Unlock()
	l.rejectAll(items, ErrClosed)
	if l.cancel != nil {
		l.cancel()
	}
	l.setState(StateStopped)
	l.log.Debug("eventloop: stopped")
}

// reject completes an event that will not be processed.
func (l *Loop) reject(ev Event, err error) {
	l.met.rejected(ev)
	l.callDone(ev, err)
}

// callDone calls ev.Done, which is user code: a panic is logged, not
// propagated, so that it cannot kill the loop or skip other events' Done.
func (l *Loop) callDone(ev Event, err error) {
	var p *PanicError
	if errors.As(guardedDone(ev, err), &p) {
		l.log.WithField("panic", p.Value).WithField("stack", string(p.Stack)).Error("eventloop: Event.Done panicked")
	}
}
