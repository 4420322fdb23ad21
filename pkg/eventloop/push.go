package eventloop

import (
	"context"
	"errors"
	"fmt"
)

// PushEvent queues ev for processing. It never blocks: it fails with
// ErrQueueFull when the queue is full, ErrClosed after Close or Shutdown, an
// error wrapping ErrAborted after an abort, and ErrInvalidEvent for events
// the loop cannot process. When it returns nil, ev.Done will be called
// exactly once; when it returns an error, never.
//
// Handlers must not use it for follow-ups (see ResyncOperations.PushFollowUp).
func (l *Loop) PushEvent(ev Event) error { return l.push(nil, ev) }

// PushEventContext is PushEvent, except that it waits for room in a full
// queue until ctx ends (returning ctx.Err()). With the context of a
// transaction it does not wait: only the loop could make room.
func (l *Loop) PushEventContext(ctx context.Context, ev Event) error {
	if ctx == nil {
		return errors.New("eventloop: PushEventContext called with a nil context")
	}
	return l.push(ctx, ev)
}

func (l *Loop) push(ctx context.Context, ev Event) error {
	if ctx != nil && InLoop(ctx) {
		// Only the loop can make room, so a handler must not wait for it.
		ctx = nil
	}
	kind, err := l.classify(ev)
	if err != nil {
		return err
	}
	for {
		l.q.mu.Lock()
		if l.q.err != nil {
			err := l.q.err
			l.q.mu.Unlock()
			return err
		}
		if l.q.roomLocked(kind) {
			l.q.pushLocked(queued{ev: ev, kind: kind})
			if kind == kindShutdown {
				l.q.err = ErrClosed
			}
			l.q.mu.Unlock()
			return nil
		}
		if ctx == nil {
			l.q.mu.Unlock()
			return ErrQueueFull
		}
		if l.q.space == nil {
			l.q.space = make(chan struct{})
		}
		space := l.q.space
		l.q.mu.Unlock()
		select {
		case <-space:
		case <-ctx.Done():
			return ctx.Err()
		case <-l.stopCh:
			return ErrClosed
		}
	}
}

// classify validates ev (so that the loop never meets an invalid event) and
// tells how the queue must treat it.
func (l *Loop) classify(ev Event) (eventKind, error) {
	if ev == nil {
		return kindNormal, fmt.Errorf("%w: nil event", ErrInvalidEvent)
	}
	m := ev.Method()
	if !m.valid() {
		return kindNormal, fmt.Errorf("%w: %s has unknown method %d", ErrInvalidEvent, ev.GetName(), int(m))
	}
	if m == Update {
		if _, ok := ev.(UpdateEvent); !ok {
			return kindNormal, fmt.Errorf("%w: %s has method Update but does not implement UpdateEvent", ErrInvalidEvent, ev.GetName())
		}
	}
	if _, ok := ev.(*Shutdown); ok {
		return kindShutdown, nil
	}
	if m != Update && !l.readyFlag.Load() && l.isStartup(ev) {
		return kindStartup, nil
	}
	return kindNormal, nil
}

// pushFollowUp queues a follow-up of the event being processed; it runs on
// the loop goroutine (called by a handler through its transaction).
func (l *Loop) pushFollowUp(t *txn, ev Event) error {
	kind, err := l.classify(ev)
	if err != nil {
		return err
	}
	if len(l.followUps)-l.fuHead >= l.cfg.QueueSize {
		return ErrQueueFull
	}
	if fl, ok := ev.(followUpLinker); ok {
		fl.setFollowUpParent(t)
	}
	if kind == kindStartup {
		kind = kindNormal
	}
	l.followUps = append(l.followUps, queued{ev: ev, kind: kind, followUp: true, parent: t.seq})
	return nil
}
