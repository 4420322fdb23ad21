package eventloop

import (
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
)

// outcome of an event, for metrics.
type outcome uint8

const (
	outcomeOK outcome = iota
	outcomeError
	outcomeReverted
	outcomeAborted
	outcomeFatal
	numOutcomes
)

var outcomeNames = [numOutcomes]string{"ok", "error", "reverted", "aborted", "fatal"}

// eventRun is the state of processing one event.
type eventRun struct {
	it        queued
	rec       *record
	t         *txn
	method    EventMethodType
	txnType   UpdateTransactionType
	errs      []error
	fatal     error
	aborted   bool
	reverted  bool
	commitErr error
	committed bool  // the handlers' values became the desired state (see TxnObserver)
	selected  []int // the handlers that want the event, in calling order
	stateErr  error // StateCarrier.ApplyState panicked
	finalized bool
	doneDue   bool // finalize is about to call Done
}

// process runs one event through the handlers, commits its transaction and
// finalizes it (history, log, metrics, healing, Done). The numbered steps
// follow Contiv's processEvent.
func (l *Loop) process(it queued) {
	ev := it.ev
	r := &eventRun{it: it, rec: l.newRecord()}
	defer l.recoverProcess(r)
	rec := r.rec
	rec.SeqNum = l.seq
	l.seq++
	rec.ProcessingStart = l.clock.Now()
	rec.IsFollowUp, rec.FollowUpTo = it.followUp, it.parent
	rec.event = ev
	rec.Name = ev.GetName()
	r.method = ev.Method()
	rec.Method = r.method
	r.t = &txn{loop: l, ctx: l.txnCtx, seq: rec.SeqNum}
	resync := r.method.IsResync()

	// 1. Resync bookkeeping and update-event properties.
	reverse := false
	if u, ok := ev.(UpdateEvent); ok && !resync {
		r.txnType = u.TransactionType()
		reverse = u.Direction() == Reverse
	}
	if r.method == FullResync || r.method == UpstreamResync {
		l.resyncCount++
	}

	// 2. Input caches: the opaque input state and external configuration.
	// An event the input state has already overtaken reaches no handler.
	superseded := l.applyInput(r, ev)
	extKeys := l.ext.applyEvent(ev)

	// 3-4. Handlers interested in the event, in the right order.
	if superseded {
		l.selected, l.selErr = l.selected[:0], l.selErr[:0]
	} else {
		l.selectHandlers(ev, reverse)
	}
	sel := l.selected

	// 5-6. Announce the event.
	if l.boxesEnabled() && l.cfg.EventLogFormat != EventLogLine {
		l.logNewEvent(rec, sel)
	}

	// 7. Let the handlers build the transaction.
	r.selected = sel
	completed := l.runHandlers(r, ev, sel, resync)

	// 8-9. Merge external configuration and commit, unless the event failed
	// in a way that forbids it.
	revertOnFailure := !resync && r.txnType == RevertOnFailure
	if r.fatal == nil && !r.aborted && !(revertOnFailure && len(r.errs) > 0) {
		l.commit(r, extKeys)
	}

	// 10. Tell the handlers that follow their transactions what became
	// of this one, then undo the internal changes of those that completed
	// (decided first: a TxnDone that panics fails the event, so that it is
	// healed, but undoes no committed transaction).
	failedRevert := revertOnFailure && r.fatal == nil && (len(r.errs) > 0 || r.commitErr != nil)
	l.tellTxnDone(r)
	if failedRevert {
		if r.commitErr != nil {
			completed = len(sel)
		}
		l.revert(r, sel[:completed])
	}

	// 11-13. Finalize.
	l.finalize(r)
}

// applyInput updates the input state for ev: the state it carries, or a
// refresh for a FullResync when Options.RefreshState is set. A failure is
// kept in r.stateErr: handlers still run (on the previous state), and the
// error fails the event, which schedules a healing resync. It reports
// whether ev is an update the input state has already overtaken.
func (l *Loop) applyInput(r *eventRun, ev Event) (superseded bool) {
	if sc, ok := ev.(StateCarrier); ok {
		if err := l.applyState(sc); err != nil {
			r.stateErr = fmt.Errorf("applying input state: %w", err)
		} else if s, ok := sc.(SupersedableEvent); ok && r.method == Update {
			superseded = s.Superseded()
		}
	} else if r.method == FullResync && l.refresh != nil {
		if err := l.refreshState(); err != nil {
			r.stateErr = fmt.Errorf("refreshing input state: %w", err)
		}
	}
	return superseded
}

// runHandlers calls the selected handlers (sel, with their selection errors
// in l.selErr) in order, recording each in r; it stops at a fatal or
// aborting error, and at any error of a RevertOnFailure update. It returns
// how many handlers completed before the first failure: those to revert.
func (l *Loop) runHandlers(r *eventRun, ev Event, sel []int, resync bool) (completed int) {
	for k, idx := range sel {
		var change string
		err := l.selErr[k]
		if err == nil {
			change, err = l.callHandler(idx, ev, resync, r.t)
		}
		r.rec.Handlers = append(r.rec.Handlers, HandlerRecord{Handler: l.names[idx], Change: change, Error: err})
		if err == nil {
			if len(r.errs) == 0 {
				completed++ // before any failure: to revert if needed
			}
			continue
		}
		r.errs = append(r.errs, &HandlerError{Handler: l.names[idx], Err: err})
		if isFatal(err) {
			r.fatal = err
			break
		}
		if isAbort(err) {
			r.aborted = true
			break
		}
		if r.txnType == RevertOnFailure && !resync {
			break
		}
	}
	return completed
}

// commit merges the external configuration into the transaction and hands
// it to the committer.
func (l *Loop) commit(r *eventRun, extKeys []string) {
	var (
		values []KeyValue
		err    error
	)
	switch r.method {
	case Update:
		values, err = l.ext.updateValues(r.t, extKeys)
	case DownstreamResync:
	default:
		values, err = l.ext.resyncValues(r.t)
	}
	if err != nil {
		r.commitErr = err // nothing reached the committer
	} else if (r.method.IsResync() || len(values) > 0) && l.committer != nil {
		req := TxnRequest{
			SeqNum:          r.rec.SeqNum,
			Method:          r.method,
			Values:          values,
			Description:     l.describeTxn(r),
			RevertOnFailure: r.method == Update && r.txnType == RevertOnFailure,
		}
		if l.retry.Enabled {
			req.Retry = l.retry
		}
		var summary TxnSummary
		summary, err = l.callCommitter(req)
		r.rec.Txn = summary.bounded()
		if err != nil {
			r.commitErr = &CommitError{Err: err}
		}
		r.committed = err == nil || !req.RevertOnFailure
	} else {
		r.committed = true // nothing to hand over: what was put stands
	}
	r.rec.TxnError = r.commitErr
	// The committer undid a failed RevertOnFailure transaction; otherwise
	// what the handlers put is the desired internal configuration, applied or
	// not.
	if r.method != DownstreamResync && (r.commitErr == nil || r.txnType != RevertOnFailure) {
		l.ext.remember(r.t, r.method.IsResync())
	}
}

func (l *Loop) describeTxn(r *eventRun) string {
	var b strings.Builder
	b.WriteString(r.rec.Name)
	for _, h := range r.rec.Handlers {
		if h.Change != "" {
			b.WriteString("\n* ")
			b.WriteString(h.Handler)
			b.WriteString(": ")
			b.WriteString(h.Change)
		}
	}
	return b.String()
}

// tellTxnDone calls TxnDone on the handlers that want the event and
// observe their transactions, in calling order, whether they were called
// or not. A panic in one is logged and does not keep the others from
// being told.
func (l *Loop) tellTxnDone(r *eventRun) {
	for _, idx := range r.selected {
		o, ok := l.handlers[idx].(TxnObserver)
		if !ok {
			continue
		}
		if err := l.callTxnDone(o, idx, r.it.ev, r.committed); err != nil {
			l.log.WithError(err).WithField("handler", l.names[idx]).Error("eventloop: TxnDone panicked")
			r.errs = append(r.errs, &HandlerError{Handler: l.names[idx], Err: err})
		}
	}
}

// revert calls Revert on the handlers that completed, in reverse order.
func (l *Loop) revert(r *eventRun, done []int) {
	r.reverted = true
	for k := len(done) - 1; k >= 0; k-- {
		idx := done[k]
		err := l.callRevert(idx, r.it.ev)
		r.rec.Handlers = append(r.rec.Handlers, HandlerRecord{Handler: l.names[idx], Revert: true, Error: err})
		if err == nil {
			continue
		}
		r.reverted = false
		r.errs = append(r.errs, &HandlerError{Handler: l.names[idx], Revert: true, Err: err})
		if isFatal(err) {
			r.fatal = err
			return
		}
	}
}

// finalize records and logs the event, decides about healing or abort, and
// only then calls Done, so that whoever waits for the event observes the
// loop in its state after the event.
func (l *Loop) finalize(r *eventRun) {
	if r.finalized {
		return
	}
	r.finalized = true
	r.t.finished.Store(true)
	rec := r.rec
	rec.ProcessingEnd = l.clock.Now()

	evErr := r.err()
	l.met.processed(rec.Name, r.outcome(evErr), rec.ProcessingEnd.Sub(rec.ProcessingStart))

	if l.boxesEnabled() {
		if l.cfg.EventLogFormat == EventLogLine {
			l.logEventLine(rec)
		} else {
			l.logFinalizedEvent(rec)
		}
	}
	rec.describe() // the history keeps the description, not the event
	if l.cfg.RecordEventHistory {
		l.spare = l.hist.add(rec)
	} else {
		l.spare = rec
	}

	l.react(r, evErr)
	r.doneDue = true
	l.processed.Add(1)
	l.callDone(r.it.ev, evErr)
}

// err is the error of the event: its handlers', its input state's and its
// commit's, joined.
func (r *eventRun) err() error {
	errs := r.errs
	if r.stateErr != nil {
		errs = append(errs, r.stateErr)
	}
	if r.commitErr != nil {
		errs = append(errs, r.commitErr)
	}
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	default:
		return errors.Join(errs...)
	}
}

// outcome classifies the event, whose error is evErr, for the metrics.
func (r *eventRun) outcome(evErr error) outcome {
	switch {
	case r.fatal != nil:
		return outcomeFatal
	case r.aborted:
		return outcomeAborted
	case evErr != nil && r.reverted:
		return outcomeReverted
	case evErr != nil:
		return outcomeError
	}
	return outcomeOK
}

// recoverProcess is the last line of defence: a panic outside the handler,
// committer and merge calls (those are recovered individually), e.g. in an
// event's own methods, fails the event instead of killing the loop.
func (l *Loop) recoverProcess(r *eventRun) {
	p := recover()
	if p == nil {
		return
	}
	err := &PanicError{Value: p, Stack: debug.Stack()}
	l.log.WithField("panic", p).WithField("stack", string(err.Stack)).Error("eventloop: panic while processing an event")
	if r.finalized {
		// Finalizing itself failed (e.g. an error whose Error method
		// panics): at least complete the event.
		if !r.doneDue {
			l.processed.Add(1)
			l.callDone(r.it.ev, err)
		}
		return
	}
	if r.t == nil {
		r.t = &txn{loop: l}
	}
	r.errs = append(r.errs, err)
	l.finalize(r)
}
