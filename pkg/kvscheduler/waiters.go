package kvscheduler

import "slices"

// Waiting deletes: a value whose delete was refused because a dependent
// still exists (its own delete failed) waits for that dependent to go,
// and is deleted again then.

// releaseWaiters deletes again, right after n, the values whose delete
// waited for n to go, now that n is gone or changed: a waiter before the
// waiters it depends on (see dependentsFirst).
func (w *walker) releaseWaiters(n *node) {
	ws := w.s.waiters[n.key]
	if len(ws) == 0 {
		return
	}
	delete(w.s.waiters, n.key)
	for _, p := range slices.Backward(dependentsFirst(ws)) {
		w.push(frame{kind: fRedelete, n: p, key: n.key})
	}
}

// wait records that n's failed operation waits for the value at key to go
// (or change): n is listed once, under its latest wait only.
func (s *Scheduler) wait(n *node, key string) {
	s.unwait(n)
	n.ext().waitsOn = key
	s.waiters[key] = append(s.waiters[key], n)
}

// unwait drops n's wait, if any.
func (s *Scheduler) unwait(n *node) {
	if n.waitsOn() == "" {
		return
	}
	removeNode(s.waiters, n.x.waitsOn, n)
	n.x.waitsOn = ""
}

// redelete deletes again, once the value at f.key went or changed, a value
// whose delete waited for it (see releaseWaiters), unless it is no longer
// waiting for it.
func (w *walker) redelete(f frame) {
	n := f.n
	if !w.g.has(n) || !n.blocked() || !n.exists() || n.waitsOn() != f.key || n.deleting() {
		return
	}
	// What it waited for is resolved: attempted again, even in the
	// transaction it failed in.
	w.s.clearFailure(n)
	w.attemptAgain(n)
	w.s.unwait(n)
	w.s.dirty(n)
	if n.lastOp == OpUpdate {
		// An update that waited for a property to go: its request is
		// applied (a base's latest one).
		fa := frame{kind: fApply, key: n.key, value: n.want, base: n.base, origin: n.origin}
		if n.base == "" && n.last != nil {
			fa.value, fa.last = n.last.value, n.last
		}
		w.pushReleased(n, fa)
		return
	}
	if n.base == "" && n.last != nil && !w.sameRequest(n, n.last.value, n.want) {
		// Requested again since: that request is applied.
		w.pushReleased(n, frame{kind: fApply, key: n.key, value: n.last.value, last: n.last, origin: n.origin})
		return
	}
	w.delete(n, n.delReason(), true)
}

// pushReleased pushes f, the apply of n's latest request by the release of
// its wait: if the transaction requests n further on, a failure of this
// one does not stop that request (see otherRequest).
func (w *walker) pushReleased(n *node, f frame) {
	if w.released == nil {
		w.released = map[*node]bool{}
	}
	w.released[n] = true
	w.push(f)
}
