package kvscheduler

// keyMark is what the walk marks of a key the transaction names.
type keyMark uint8

const (
	markApplied keyMark = 1 << iota // set by the transaction itself
	markLater                       // a value of the transaction not applied yet
)

// The marks are kept on the keys' nodes (node.mark, valid while
// node.markSeq is the walk's sequence number), so that marking and
// asking cost no lookup in a map of the transaction's size; a key without
// a node when marked (a delete of a key the scheduler does not know, a
// notification) is marked in w.marks, which the node takes over if it is
// created and marked again.

// markNode adds m to n's marks.
func (w *walker) markNode(n *node, m keyMark) {
	if n.markSeq != w.seq {
		n.markSeq, n.mark = w.seq, 0
		if len(w.marks) > 0 {
			n.mark = w.marks[n.key]
		}
		w.marked = append(w.marked, n)
	}
	n.mark |= m
}

func (w *walker) mark(k string, m keyMark) {
	if n := w.g.nodes[k]; n != nil {
		w.markNode(n, m)
		return
	}
	if w.marks == nil {
		w.marks = map[string]keyMark{}
	}
	w.marks[k] |= m
}

// marksOf returns the marks of n.
func (w *walker) marksOf(n *node) keyMark {
	if n.markSeq == w.seq {
		return n.mark
	}
	if len(w.marks) == 0 {
		return 0
	}
	return w.marks[n.key]
}

// marksOfKey returns the marks of k.
func (w *walker) marksOfKey(k string) keyMark {
	if n := w.g.nodes[k]; n != nil {
		return w.marksOf(n)
	}
	return w.marks[k]
}

// setApplied marks k as set by the transaction itself.
func (w *walker) setApplied(k string) { w.mark(k, markApplied) }

// setLater marks k as a value of the transaction not applied yet.
func (w *walker) setLater(k string) { w.mark(k, markLater) }

// applyNow marks k, a value of the transaction, as applied now: no longer
// later.
func (w *walker) applyNow(k string) {
	if n := w.g.nodes[k]; n != nil {
		w.applyNowNode(n)
		return
	}
	if w.marks == nil {
		w.marks = map[string]keyMark{}
	}
	w.marks[k] = w.marks[k]&^markLater | markApplied
}

// applyNowNode is applyNow for a key with a node.
func (w *walker) applyNowNode(n *node) {
	w.markNode(n, markApplied)
	n.mark &^= markLater
}

func (w *walker) isApplied(k string) bool { return w.marksOfKey(k)&markApplied != 0 }

// appliedNode is isApplied for a key with a node.
func (w *walker) appliedNode(n *node) bool { return w.marksOf(n)&markApplied != 0 }

// later tells whether n is a value of the transaction not applied yet.
func (w *walker) later(n *node) bool { return w.marksOf(n)&markLater != 0 }

// noneLater drops the later marks: an undo (see Scheduler.revert) ends
// the transaction's own values, so a value it did not reach is not
// applied further on and its dependents' checks must not wait for it.
func (w *walker) noneLater() {
	for _, n := range w.marked {
		if n.markSeq == w.seq {
			n.mark &^= markLater
		}
	}
	for k, m := range w.marks {
		w.marks[k] = m &^ markLater
	}
}

// eachApplied calls f with the node of every key marked applied that
// has one.
func (w *walker) eachApplied(f func(n *node)) {
	for _, n := range w.marked {
		if n.mark&markApplied != 0 && w.g.has(n) {
			f(n)
		}
	}
	for k, m := range w.marks {
		if m&markApplied == 0 {
			continue
		}
		if n := w.g.nodes[k]; n != nil && n.markSeq != w.seq {
			f(n) // else the node took the key's marks over: listed above
		}
	}
}
