package eventloop

import "runtime/debug"

// The loop calls user code (handlers, the committer, state carriers)
// only through these functions: each turns a panic into a *PanicError, so
// that a bad handler fails its event instead of killing the loop.

// recoverInto, deferred, sets *err to the panic under way, if any.
func recoverInto(err *error) {
	if p := recover(); p != nil {
		*err = &PanicError{Value: p, Stack: debug.Stack()}
	}
}

// applyState lets an event that carries state change the input state.
func (l *Loop) applyState(sc StateCarrier) (err error) {
	defer recoverInto(&err)
	l.input = sc.ApplyState(l.input)
	return nil
}

// refreshState replaces the input state with Options.RefreshState's; on an
// error or a panic the previous state stays.
func (l *Loop) refreshState() (err error) {
	defer recoverInto(&err)
	state, err := l.refresh()
	if err != nil {
		return err
	}
	l.input = state
	return nil
}

// selectHandlers fills l.selected with the indexes of the handlers that want
// ev, in calling order. A HandlesEvent that panics selects its handler with
// the panic as its error, so that the failure is visible in the event.
func (l *Loop) selectHandlers(ev Event, reverse bool) {
	l.selected, l.selErr = l.selected[:0], l.selErr[:0]
	if ev.Method() == DownstreamResync {
		return
	}
	n := len(l.handlers)
	for i := 0; i < n; i++ {
		idx := i
		if reverse {
			idx = n - 1 - i
		}
		handles, err := l.callHandles(idx, ev)
		if handles || err != nil {
			l.selected = append(l.selected, idx)
			l.selErr = append(l.selErr, err)
		}
	}
}

func (l *Loop) callHandles(idx int, ev Event) (handles bool, err error) {
	defer recoverInto(&err)
	return l.handlers[idx].HandlesEvent(ev), nil
}

func (l *Loop) callHandler(idx int, ev Event, resync bool, t *txn) (change string, err error) {
	defer l.markBusy(safeName(ev), l.names[idx])()
	defer recoverInto(&err)
	if resync {
		return "", l.handlers[idx].Resync(ev, l.input, l.resyncCount, t)
	}
	return l.handlers[idx].Update(ev, t)
}

func (l *Loop) callRevert(idx int, ev Event) (err error) {
	defer l.markBusy(safeName(ev), l.names[idx])()
	defer recoverInto(&err)
	return l.handlers[idx].Revert(ev)
}

func (l *Loop) callTxnDone(o TxnObserver, idx int, ev Event, committed bool) (err error) {
	defer l.markBusy(safeName(ev), l.names[idx])()
	defer recoverInto(&err)
	o.TxnDone(ev, committed)
	return nil
}

func (l *Loop) callCommitter(req TxnRequest) (summary TxnSummary, err error) {
	defer l.markBusy(req.Description, "commit")()
	defer recoverInto(&err)
	return l.committer.Commit(l.ctx, req)
}

// callMerge merges an external source's value over the one below it.
func (x *externalConfig) callMerge(key string, below, above any, source string) (v any, err error) {
	defer recoverInto(&err)
	return x.merge(key, below, above, source)
}

// guardedDone calls ev.Done(err); its error is the panic of Done, if any.
func guardedDone(ev Event, err error) (panicked error) {
	defer recoverInto(&panicked)
	ev.Done(err)
	return nil
}
