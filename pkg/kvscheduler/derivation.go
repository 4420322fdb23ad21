package kvscheduler

import (
	"fmt"
	"slices"
)

// maxDerivedDepth bounds a chain of derived values of derived values: a
// deeper one is a descriptor that derives without end (each derived
// value deriving the next), which would otherwise grow the graph until
// the process runs out of memory.
const maxDerivedDepth = 32

// derivationErr tells why the derived values of n's wanted value cannot
// be applied, nil if they can. A key is one value: derived once by its
// base, not both requested and derived, and not derived by a value that
// derives from it (a cycle); a chain of derived values has an end. Such a
// value is a descriptor's bug; it is INVALID, so that the transaction
// that requests it fails with an error that names it, rather than delete
// a value still wanted or derive for ever.
// derived are n's derived values (derivedOf), asked once per walk of n.
func (w *walker) derivationErr(n *node, derived []KeyValuePair) error {
	if len(derived) == 0 {
		return nil
	}
	if c, ok := w.clashRestored(n, derived); ok {
		w.noteClash(n, c.key)
		return c.err // as it was before the transaction
	}
	var up [maxDerivedDepth]string // the bases of n, nearest first
	depth := 0
	for b := n; b.base != ""; depth++ {
		if depth == maxDerivedDepth {
			return fmt.Errorf("kvscheduler: %s: derived values nested deeper than %d (a descriptor that derives without end)", n.key, maxDerivedDepth)
		}
		up[depth] = b.base
		if b = w.g.nodes[b.base]; b == nil {
			depth++
			break
		}
	}
	for i, kv := range derived {
		switch {
		case i > 0 && derived[i-1].Key == kv.Key:
			return fmt.Errorf("kvscheduler: %s derives %s twice", n.key, kv.Key)
		case slices.Contains(up[:depth], kv.Key):
			return fmt.Errorf("kvscheduler: %s derives %s, which it derives from", n.key, kv.Key)
		}
		c := w.g.nodes[kv.Key]
		if c == nil || c.base == n.key {
			continue
		}
		if c.base != "" && !(w.derivedBy(c) && !w.releasesKey(w.g.nodes[c.base], kv.Key)) {
			// (A base requested further on in the transaction with a
			// value that derives the key no more releases it: clashes
			// are judged on the values the transaction requests.)
			continue
		}
		if err := clashErr(n, c); err != nil {
			w.noteClash(n, kv.Key)
			return err
		}
	}
	return nil
}

// derivedBy tells whether derived value c is still its base's: the base
// is wanted and lists it (it derives it, or it is left over from a failed
// delete).
func (w *walker) derivedBy(c *node) bool { return w.g.listedByBase(c) }

// unlistGone makes the base of derived value n, which leaves the graph
// (neither wanted nor in the southbound), stop listing it: a base lists
// the derived values it holds now, not those a read of it once said it
// derives. Left listed, the key looked the base's own when another base
// took it later: the first base's delete or change deleted it as its own
// (a value still wanted), and a request of it judged no clash on it.
func (s *Scheduler) unlistGone(n *node) {
	b := s.g.nodes[n.base]
	if n.base == "" || b == nil {
		return
	}
	if i := slices.Index(b.derived, n.key); i >= 0 {
		// A new list: the old one may be the node's own array (derivedOne).
		b.derived = slices.Concat(b.derived[:i:i], b.derived[i+1:])
		if len(b.derived) == 0 {
			b.derived = nil
		}
	}
}

// refuseDerivedKey refuses a northbound request of n, a derived value its
// base still derives: a key is one value, and n is its base's (taken
// over, it would be deleted with its base while requested, or left there
// for ever). A request to set it fails, naming the base; a request to
// delete it has nothing of the northbound's to delete. The derived value
// stays as it is.
func (w *walker) refuseDerivedKey(n *node, value any) {
	if value == nil {
		return
	}
	err := fmt.Errorf("kvscheduler: %s is derived from %s; the northbound cannot request it", n.key, n.base)
	ro := w.newOp(OpUpdate, n)
	ro.NewValue, ro.NOOP, ro.Err = value, true, err
	w.record(n, ro)
	w.rec.Errors = append(w.rec.Errors, KeyError{Key: n.key, Operation: OpUpdate, Err: err})
	if w.isApplied(n.key) {
		w.topErr = true
	}
}

// clashErr tells why n cannot derive c's key while c holds it as it does
// now, nil if c is not another value's: the southbound's own (notified,
// or found by a read and nobody's request: OBTAINED), the northbound's
// request, or another base's derived value. The error names the holder,
// so it is asked again when the holder changes (see applyReleased).
func clashErr(n, c *node) error {
	switch {
	case c.base == "" && c.last != nil && c.last.value != nil && c.origin == FromSB:
		// Notified: the southbound's own value, which the scheduler
		// never takes over (nor deletes with a base).
		return fmt.Errorf("kvscheduler: %s derives %s, which the southbound notified as its own", n.key, c.key)
	case c.base == "" && c.last == nil && c.origin == FromSB && c.exists():
		// Found by a read and nobody's request (OBTAINED): as much the
		// southbound's own as a notified value.
		return fmt.Errorf("kvscheduler: %s derives %s, which the southbound holds as its own", n.key, c.key)
	case c.base == "" && c.last != nil && c.last.value != nil:
		return fmt.Errorf("kvscheduler: %s derives %s, which the northbound requests", n.key, c.key)
	case c.base != "" && c.base != n.key:
		return fmt.Errorf("kvscheduler: %s derives %s, which %s derives", n.key, c.key, c.base)
	}
	return nil
}
