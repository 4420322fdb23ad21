package eventloop

import (
	"fmt"
	"time"
)

// LoopState is the phase of a Loop.
type LoopState int

const (
	// StateStarting: waiting for the startup resync (also before Start).
	StateStarting LoopState = iota
	// StateRunning: the startup resync has been processed.
	StateRunning
	// StateAborted: a fatal error or a missed startup deadline stopped event
	// processing; every event fails with ErrAborted.
	StateAborted
	// StateStopped: closed, or stopped by a Shutdown event.
	StateStopped
)

// String names the state.
func (s LoopState) String() string {
	switch s {
	case StateStarting:
		return "Starting"
	case StateRunning:
		return "Running"
	case StateAborted:
		return "Aborted"
	case StateStopped:
		return "Stopped"
	}
	return fmt.Sprintf("LoopState(%d)", int(s))
}

// Status is a snapshot of a Loop for health checks and tests.
type Status struct {
	// State is the phase of the loop.
	State LoopState
	// Err is the cause of an abort (nil otherwise).
	Err error
	// Processed counts the events whose processing has finished (their
	// Done is called right after the count grows).
	Processed uint64
	// QueueLength is the number of events waiting, held ones included.
	QueueLength int
	// HealingDue is when the pending after-error healing runs; zero when
	// none is pending.
	HealingDue time.Time
	// FailedHealings counts the after-error healings that failed in a row;
	// the loop aborts when it reaches Config.MaxFailedHealings.
	FailedHealings int
}

// Health returns nil while the loop is starting or running, the cause
// (wrapping ErrAborted) after an abort, and ErrClosed once stopped.
func (l *Loop) Health() error {
	l.statusMu.Lock()
	defer l.statusMu.Unlock()
	switch l.state {
	case StateStarting:
		return l.overdue
	case StateAborted:
		return l.abortErr
	case StateStopped:
		if l.abortErr != nil {
			return l.abortErr
		}
		return ErrClosed
	}
	return nil
}

// Unhealthy is closed when the loop aborts.
func (l *Loop) Unhealthy() <-chan struct{} { return l.unhealthy }

// Exited is closed when the loop goroutine has exited (after Close, a
// processed Shutdown, or the cancellation of Start's context).
func (l *Loop) Exited() <-chan struct{} { return l.exited }

// Status returns a snapshot of the loop.
func (l *Loop) Status() Status {
	l.statusMu.Lock()
	s := Status{State: l.state, Err: l.abortErr, HealingDue: l.healingDue, FailedHealings: l.failedHealings}
	l.statusMu.Unlock()
	s.Processed = l.processed.Load()
	s.QueueLength = l.q.Len()
	return s
}

func (l *Loop) setState(s LoopState) {
	l.statusMu.Lock()
	l.state = s
	if s != StateStarting {
		l.overdue = nil
	}
	l.statusMu.Unlock()
}
