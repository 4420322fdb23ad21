package kvscheduler

import (
	"slices"
	"strings"
)

// Clashes of derived keys are judged on the values the transaction
// requests (rule 8, docs/kvscheduler.md): a key another base derives today
// is free when that base is requested further on in the same transaction
// with a value that no longer derives it, and a value INVALID for a clash
// is applied as soon as the clash is gone.

// laterRequest returns the value the transaction requests further on for
// b (a value of the transaction not applied yet), and whether it does.
func (w *walker) laterRequest(b *node) (any, bool) {
	if b == nil || !w.later(b) {
		return nil, false
	}
	if w.values == nil {
		// A retry: its values are its bases' last requests.
		if b.last == nil {
			return nil, false
		}
		return b.last.value, true
	}
	i, ok := w.valueIndex(w.values, b.key)
	if !ok {
		return nil, false
	}
	return w.values[i].value, true
}

// releasesKey tells whether base b, which derives key now, is requested
// further on in the transaction with a value that does not derive it: the
// key is then free in the state the transaction requests.
func (w *walker) releasesKey(b *node, key string) bool {
	v, ok := w.laterRequest(b)
	return ok && dropsKey(b, v, key)
}

// dropsKey tells whether v, a request of base b, leaves key underived: a
// delete, or a value that does not derive it. A descriptor that fails to
// derive keeps the key: nothing is known to let it go.
func dropsKey(b *node, v any, key string) bool {
	if v == nil || b.d == nil || b.d.DerivedValues == nil {
		return true
	}
	kvs, err := callDerived(b.d, b.key, v)
	return err == nil && !hasKey(kvs, key)
}

// takeOver detaches derived keys of n that another base still lists (and
// releases, see releasesKey) from that base: the key is n's now (derived
// by n, or requested by the northbound when n is the key itself), and the
// other base's change further on must not delete it as obsolete. Every
// key is n's from now on (see claimKey).
func (w *walker) takeOver(n *node, derived []KeyValuePair) {
	for _, kv := range derived {
		c := w.g.nodes[kv.Key]
		if c != nil && c.base == n.key {
			continue
		}
		if c != nil && c.base != "" {
			if b := w.g.nodes[c.base]; b != nil {
				w.noteTakeover(kv.Key, b)
				w.tookOn = append(w.tookOn, takeover{key: kv.Key, from: b})
				w.detachDerived(b, kv.Key)
			}
		}
		w.claimKey(n, c, kv.Key)
	}
}

// claimKey names n the base of key (c its node, nil if none yet), which
// n derives, as soon as n lists it, before n's derived values are
// applied: a value walked in between (a base whose ordering n's create
// met, run first) then finds the key n's and judges the clash (rule 8).
// Claimed only by the frame applying it, the key looked free to that
// base (no node yet, or a node naming that very base, which had let it
// go), which derived it too, and n's frame then took it from that base
// silently: both listed it, and the delete of one took the other's value
// (adv5 fuzz -fzdheld, seeds 38 and 1058).
func (w *walker) claimKey(n, c *node, key string) {
	if c == nil {
		c = w.s.newNode(key)
	}
	w.s.setBase(c, n.key, n.origin)
}

// detachDerived removes k from b's derived keys.
func (w *walker) detachDerived(b *node, k string) {
	i := slices.Index(b.derived, k)
	if i < 0 {
		return
	}
	// A new list: the old one may be the node's own array (derivedOne).
	b.derived = slices.Concat(b.derived[:i:i], b.derived[i+1:])
	if len(b.derived) == 0 {
		b.derived = nil
	}
	w.s.noteHeldBase(b)
	w.s.dirty(b)
}

// noteClash records that base n is INVALID because a key it derives is
// another value's (see applyReleased).
func (w *walker) noteClash(n *node, key string) {
	if w.s.clashed == nil {
		w.s.clashed = map[*node]string{}
	}
	w.s.clashed[n] = key
}

// clashesOn tells whether key is still another value's than n's:
// requested by the northbound, notified by the southbound, or derived by
// another wanted base (the one rule of derivedByOther, which reads
// follow too), or held by the southbound as its own, found by a read and
// requested by nobody (OBTAINED: derivationErr's clash too, so a base
// INVALID for it waits until the southbound no longer holds it rather
// than be attempted again by every transaction).
func (w *walker) clashesOn(n *node, key string) bool {
	if c := w.g.nodes[key]; c != nil && c.base == "" && c.last == nil && c.origin == FromSB && c.exists() {
		return true
	}
	return w.g.derivedByOther(n, key)
}

// applyReleased applies again the bases left INVALID for a clash whose
// key is no longer another value's (its base deleted, or changed to
// derive other keys; its request withdrawn): a value is held when it is
// wanted and valid, without waiting for a resync to apply it.
func (w *walker) applyReleased() {
	w.applyRegained()
	if len(w.s.clashed) == 0 || w.ended() {
		return
	}
	var free []*node
	for n, key := range w.s.clashed {
		switch {
		case !w.g.has(n) || n.state != Invalid || n.want == nil || n.base != "" || n.last == nil:
			delete(w.s.clashed, n) // no longer INVALID for it
		case !w.clashesOn(n, key):
			delete(w.s.clashed, n)
			free = append(free, n)
		default:
			w.renameHolder(n, key)
		}
	}
	slices.SortFunc(free, func(a, b *node) int { return strings.Compare(a.key, b.key) })
	for _, n := range free {
		w.run(frame{kind: fApply, key: n.key, value: n.last.value, last: n.last, origin: n.origin, n: n})
	}
}

// restoreClash makes the undo of key, INVALID before the transaction
// because key clash was another value's, leave it INVALID again (see
// derivationErr): the undo restores the state before the transaction,
// and the value the key was is given back further on in the undo (last
// first: the value re-applied first would otherwise take the key). If
// that value is not given back after all, the clash is gone and the
// value is applied once the undo is done (applyReleased).
func (w *walker) restoreClash(key, clash string, err error) {
	if w.restoring == nil {
		w.restoring = map[string]restoredClash{}
	}
	w.restoring[key] = restoredClash{key: clash, err: err}
}

// restoredClash is the INVALID state an undo restores: the key clashed
// on, and the error the value had.
type restoredClash struct {
	key string
	err error
}

// clashRestored returns the clash n's undo restores (see restoreClash),
// if n derives its key.
func (w *walker) clashRestored(n *node, derived []KeyValuePair) (restoredClash, bool) {
	if !w.reverting() || len(w.restoring) == 0 || n.last == nil || !n.last.revert {
		return restoredClash{}, false
	}
	c, ok := w.restoring[n.key]
	return c, ok && c.err != nil && hasKey(derived, c.key)
}

// renameHolder gives n, still INVALID for a clash on key, the error that
// names key's holder now: the holder may have changed since n was judged
// (a read found the key the southbound's own, another base took it), and
// the error the user reads must not send them to a value that no longer
// holds the key.
func (w *walker) renameHolder(n *node, key string) {
	c := w.g.nodes[key]
	if c == nil {
		return
	}
	err := clashErr(n, c)
	if err == nil || (n.err != nil && n.err.Error() == err.Error()) {
		return
	}
	n.err = err
	w.s.dirty(n)
}
