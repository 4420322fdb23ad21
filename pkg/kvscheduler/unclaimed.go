package kvscheduler

// Keys no descriptor claims: the southbound may notify them (a deviation
// from the reference, see docs/kvscheduler.md), and then holds them; the
// northbound may request them, and nothing can apply that request. What
// is held comes from the southbound's notifications only, what is wanted
// from the northbound's request: neither changes the other.

// unclaimedRequest applies a northbound request (value) or its withdrawal
// (nil) of n, a key no descriptor claims that the southbound holds (it
// notified it). Nothing can create, update or delete it: the request
// waits UNIMPLEMENTED while the southbound's value stays held, with the
// values that depend on it; withdrawn, the key is the southbound's again
// (OBTAINED). It tells whether it applied the request.
func (w *walker) unclaimedRequest(n *node, value any) bool {
	if n.d != nil || n.base != "" || !n.exists() || n.dErr() != nil {
		return false
	}
	ro := w.newOp(OpUpdate, n)
	if value == nil {
		ro.Operation = OpDelete
		// As the southbound notified it.
		n.last = &update{value: n.sb, seq: w.seq}
		n.origin, n.state = FromSB, Obtained
		n.setWant(n.sb)
	} else {
		n.origin, n.state = FromNB, Unimplemented
		n.setWant(value)
	}
	n.err = nil
	w.s.dirty(n)
	ro.NewValue, ro.NOOP = value, true
	w.record(n, ro)
	return true
}

// notifiedUnclaimed applies a southbound notification of n, a key no
// descriptor claims that the northbound requests: the southbound says
// what it holds (value, or nil: gone), the request stays as it is.
func (w *walker) notifiedUnclaimed(n *node, value any) {
	switch {
	case value == nil && n.exists():
		n.setSB(nil)
		n.avail = false
		w.s.noteHeld(n)
		w.availChanged(n, true)
	case value != nil:
		appeared := !n.exists()
		n.avail = true
		n.setSB(value)
		w.s.noteHeld(n)
		if appeared {
			w.availChanged(n, true)
		}
	}
	w.s.dirty(n)
	w.drain(n.key)
}
