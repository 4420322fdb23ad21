package kvscheduler

import (
	"context"
	"maps"
	"slices"
)

// process runs one job on the worker goroutine.
func (s *Scheduler) process(j *job) (*TxnRecord, error) {
	switch j.kind {
	case jobRegister:
		return s.register(j.desc)
	case jobNotify:
		return s.notify(j.kv)
	case jobRetry:
		return s.retryFailed(j)
	}
	return s.processTxn(j)
}

// newWalker starts the walk of a transaction whose descriptor callbacks
// get ctx; nil means the scheduler's lifetime context (work no caller
// waits for).
func (s *Scheduler) newWalker(rec *TxnRecord, ctx context.Context) *walker {
	if ctx == nil {
		ctx = s.ctx
	}
	return &walker{s: s, g: s.g, rec: rec, seq: rec.SeqNum + 1, ctx: ctx}
}

// newNode adds a node for key, owned by the descriptor claiming it.
func (s *Scheduler) newNode(key string) *node {
	n := s.g.add(key)
	d, err := s.reg.owner(key)
	n.d = d
	n.setDErr(err)
	return n
}

func (s *Scheduler) processTxn(j *job) (*TxnRecord, error) {
	t := j.txn
	rec := s.newRecord(NBTransaction)
	rec.Description, rec.Resync, rec.Revert = t.description, t.resync, t.revert && t.resync == NoResync
	// The record is the caller's to keep: a copy, which neither a Txn
	// set again after its Commit nor an edit of the record reaches.
	rec.Values = slices.Clone(t.values)
	ctx, done := s.txnContext(j.ctx)
	defer done()
	w := s.newWalker(rec, ctx)
	// Read what the southbound holds (a resync), then apply the values,
	// then undo them if the transaction reverts on failure, then read
	// back what failed and report.
	scope := s.readForResync(w, t)
	values := s.prepareValues(w, t, scope)
	w.values = values
	w.dels = txnDeletes(values)
	if len(w.stack) > 0 {
		// Deletes that waited for values the read found gone, walked once
		// the transaction's values are marked as to come: a value they
		// reach that the transaction requests further on is applied then,
		// with its new value, not created now with the one it waited with
		// (seed 398638).
		w.drain("the values read back")
	}
	ls, from := s.startLeaveCheck(w)
	undos := s.applyValues(w, values)
	w.resume()
	w.recheckRead()
	out := txnOutcome{revertFrom: -1}
	if w.topErr && rec.Revert {
		s.revert(w, undos, &out)
	}
	w.applyReleased()
	w.settleCycles()
	s.endLeaveCheck(w, ls, from, out.revertFrom >= 0)
	s.refreshFailed(w)
	if out.revertFrom < 0 {
		out.invalid = s.invalidOf(w)
	}
	terr := s.txnError(w, &out)
	s.finish(w)
	if terr == nil {
		return rec, nil
	}
	return rec, terr
}

// readForResync starts a resync: it attempts the failed values (of its
// scope) again and reads back what the southbound holds. It returns the
// keys of a scoped resync (nil for any other transaction).
func (s *Scheduler) readForResync(w *walker, t *Txn) map[string]bool {
	rec := w.rec
	var scope map[string]bool // the keys of a scoped resync
	if len(t.resyncKeys) > 0 {
		scope = make(map[string]bool, len(t.resyncKeys))
		for _, k := range t.resyncKeys {
			if !scope[k] {
				scope[k] = true
				rec.ResyncKeys = append(rec.ResyncKeys, k)
			}
		}
	}
	// As in the reference, where only a failure in the same transaction
	// stops a value, a transaction attempts what it requests again, even
	// the value something failed with.
	w.kind.renew = t.resync == NoResync
	// What a failed read-back left unknown is read first, whatever the
	// transaction: nothing is decided on a belief the read could not
	// confirm (the walk of what it finds runs once the transaction's
	// values are marked, with the deletes below). A transaction that
	// requests nothing, resyncs nothing and has no stopped transaction's
	// work to resume decides nothing, so it leaves them to the next one:
	// it must not wait on a southbound that does not answer (the read of
	// a value whose request a cancelled Commit cut). One with work to
	// resume decides, so it reads: a read that fails again holds the
	// operations on what it could not see (holdUnread), and the rest of
	// the work goes on (seed 44978).
	if len(t.values) > 0 || t.resync != NoResync || len(s.resume) > 0 {
		s.readUnknown(w)
	}
	if t.resync != NoResync {
		// A resync attempts every failed value (of its scope) again, but
		// keeps the failures: a value that fails again goes on counting
		// its attempts (and its backoff) instead of starting over with
		// every healing.
		w.kind.unblockAll, w.kind.unblock = scope == nil, scope
		s.resyncCount++
	}
	if t.resync != NoResync && scope == nil {
		// A resync of everything touches every value; a scoped one only
		// its keys.
		s.reserve(max(len(t.values), len(s.g.nodes)))
	}
	w.phase = phaseResyncRead
	switch {
	case w.ended():
		// Nothing is read for a caller who is gone.
	case scope != nil:
		s.refreshKeys(w, rec.ResyncKeys)
	case t.resync == FullResync || t.resync == DownstreamResync:
		s.refresh(w, t.values, s.resyncCount == 1 && t.resync == FullResync)
	}
	w.phase = phaseApply
	return scope
}

// prepareValues lists the transaction's values in the order they are
// applied and marks them as to come (see keymarks.go).
func (s *Scheduler) prepareValues(w *walker, t *Txn, scope map[string]bool) []txnValue {
	rec := w.rec
	w.marked = slices.Grow(w.marked, len(t.values))
	values := s.txnValues(w, t, scope, rec.SeqNum)
	s.reserve(len(values))
	if t.resync == NoResync {
		// Room for a value and a derived value (or a value tried twice,
		// left PENDING and then created), the common shapes of a batch.
		// A resync's values are mostly in sync: its record grows with
		// what it does instead.
		rec.Executed = make([]RecordedOp, 0, min(2*len(values), 1<<16))
	}
	// The new nodes are all dirty: the list gets their room at once
	// rather than growing to it step by step (see appendDoubling).
	made := 0
	for i := range values {
		if values[i].n == nil && values[i].value != nil {
			made++
		}
	}
	if made >= 256 {
		s.dirtyNodes = slices.Grow(s.dirtyNodes, made)
	}
	for i := range values {
		v := &values[i]
		if v.n == nil && v.value != nil {
			// Its node is made now rather than when it is applied, so that
			// it carries the marks; until then it is as absent as no node
			// (nothing wanted, nothing in the southbound), and dropped by
			// the publishing if it is not applied after all.
			v.n = s.newNode(v.key)
			s.dirty(v.n)
			if v.n.d != nil {
				v.n.d.batch++
			}
		}
		if v.n != nil {
			w.markNode(v.n, markLater)
		} else {
			w.setLater(v.key)
		}
	}
	for _, d := range s.reg.order {
		// A descriptor's metadata map gets room for the values the batch
		// adds at once, rather than growing step by step under its lock.
		if d.batch >= 256 && d.WithMetadata {
			d.md.reserve(d.batch)
		}
		d.batch = 0
	}
	return values
}

// applyValues applies the transaction's values in order, each with
// everything it reaches, until the context ends (or, with revert, a value
// fails). With revert, it returns the requests to re-apply.
func (s *Scheduler) applyValues(w *walker, values []txnValue) []undo {
	rec := w.rec
	var after map[int][]txnValue // deletes postponed after a value (see postponeTo)
	for i, v := range values {
		if w.ended() {
			for _, r := range values[i:] {
				rec.notApplied(r.key)
			}
			// Between values, no frame is dropped (see dropStack): the
			// keys taken on the strength of a request not applied are
			// settled here.
			w.giveBackUnapplied()
			for _, j := range slices.Sorted(maps.Keys(after)) {
				for _, p := range after[j] {
					if j >= i {
						rec.notApplied(p.key)
					}
				}
			}
			break
		}
		// A value applied already, before a value it depends on went (see
		// deleteorder.go), is not applied again.
		if w.laterValue(v) {
			if j := w.postponeTo(values, i); j > i {
				if after == nil {
					after = map[int][]txnValue{}
				}
				after[j] = append(after[j], v)
				w.postponedAfter(i, j)
			} else {
				w.run(w.startValue(v))
			}
		}
		for _, p := range after[i] {
			if !(w.topErr && rec.Revert) && w.laterValue(p) {
				w.run(w.startValue(p))
			}
		}
		if w.topErr && rec.Revert {
			break
		}
	}
	return w.undos
}

// laterValue tells whether v, a value of the transaction, is still to be
// applied.
func (w *walker) laterValue(v txnValue) bool {
	if v.n != nil {
		return w.later(v.n)
	}
	return w.marksOfKey(v.key)&markLater != 0
}

// newRecord starts the record of a transaction of type t, numbered next.
func (s *Scheduler) newRecord(t TxnType) *TxnRecord {
	// Transactions are numbered from 0, as in the reference; the walk's
	// own number (walker.seq, node marks) is one more, so that 0 marks
	// nothing.
	s.seq++
	return &TxnRecord{SeqNum: s.seq - 1, Type: t, Start: s.opts.Clock.Now()}
}

// finish settles the cycles the walk created, reads back what failed,
// schedules retries, drops the nodes nothing refers to any more,
// publishes statuses and records the transaction.
func (s *Scheduler) finish(w *walker) {
	rec := w.rec
	w.settleCycles()
	// After every kind of transaction (notifications, retries and
	// registrations too, as in the reference), the bases of the failed
	// values are read back, so that their retries start from what the
	// southbound holds. A transaction that read them already reads
	// nothing again.
	s.refreshFailed(w)
	// The failed reads were reported (by txnError, or in the record of a
	// transaction that returns no error): they hold nothing back in the
	// next transaction, which reads what they left unknown first.
	s.unread = nil
	s.scheduleRetries(w)
	w.compact()
	markRetrying(s, w)
	// The statuses recorded and the record go in together (see history).
	s.hist.mu.Lock()
	rec.changes = s.publish()
	rec.Stop = s.opts.Clock.Now()
	s.hist.addLocked(rec, rec.Stop)
	s.hist.mu.Unlock()
	s.metrics.txn(rec)
	if l := s.opts.Logger; l != nil && l.IsLevelEnabled(s.opts.TxnLogLevel) {
		if s.opts.TxnLogFormat == TxnLogBoxes {
			l.Log(s.opts.TxnLogLevel, rec)
		} else {
			l.Log(s.opts.TxnLogLevel, rec.Line())
		}
	}
}

// setMetadata records n's metadata, in the descriptor's map too.
func (s *Scheduler) setMetadata(n *node, md any) {
	if !identical(n.metadata, md) {
		s.dirtyView(n) // DumpValues shows it
	}
	n.metadata = md
	if n.d != nil && n.d.WithMetadata {
		n.d.md.put(n.d.label(n.key), md)
	}
}

// dirty marks n's status (and view) as to be published (again) at the
// end of the transaction.
func (s *Scheduler) dirty(n *node) {
	if !n.dirty && !n.viewDirty {
		s.dirtyNodes = appendDoubling(s.dirtyNodes, n)
	}
	n.dirty = true
}

// dirtyView marks n's view (what DumpValues shows: the objects it holds,
// its metadata) as to be published again, when nothing its status is
// built from changed.
func (s *Scheduler) dirtyView(n *node) {
	if !n.dirty && !n.viewDirty {
		s.dirtyNodes = appendDoubling(s.dirtyNodes, n)
	}
	n.viewDirty = true
}

func appendUnique(xs []uint64, x uint64) []uint64 {
	if slices.Contains(xs, x) {
		return xs
	}
	return append(xs, x)
}
