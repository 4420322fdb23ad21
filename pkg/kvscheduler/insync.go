package kvscheduler

import (
	"slices"
	"strings"
)

// The in-sync shortcut: a requested value that the southbound already
// holds as requested, and whose state is settled, is not walked. A resync
// requests every value again, and most are in sync: walking them (an
// update frame, a readiness check, the derived values' frames, a status
// rebuilt to be compared with the published one) cost as much as the
// graph. The rule (also in docs/kvscheduler.md) is that the walk of such
// a value would change nothing but the objects it holds: the request, the
// value in the southbound and what the same values derive; so those are
// recorded and the value's published view replaced, and nothing else.
//
// A value (and, checked the same way, each of its derived values, with
// what it derives from the request) is in sync when all of these hold;
// any other value is walked:
//   - its status did not change in this transaction so far (not dirty: the
//     refresh read it as it was, found nothing gone or new under it, and
//     no operation of the transaction reached it or made a dependency
//     appear or go);
//   - it is CONFIGURED, from the northbound, with the same base, not
//     blocked by a failure, with no retry armed, no error, no operation
//     under way or waiting, and not applied yet in this transaction;
//   - it exists and is available, and the value in the southbound equals
//     the request (the descriptor's comparator);
//   - the request is valid, has the same dependencies (labels, keys,
//     prefixes; a key selector is never taken as the same), and they are
//     all met;
//   - the request derives the values the node lists, each of them in sync
//     in turn;
//   - no value waits for it to go, no failed read holds the transaction
//     back, and no stopped transaction left work to resume.
//
// Then its walk would run no operation, record none, leave its state and
// dependencies as they are and leave its status as published, but for its
// last operation, UPDATE (the operation chosen, as the reference reports
// it): a status whose last operation was another is published again.

// inSyncDepth bounds the derived values of derived values the shortcut
// checks; deeper trees are walked.
const inSyncDepth = 8

// inSyncEntry is one value the shortcut found in sync, with what its
// request depends on and derives.
type inSyncEntry struct {
	n          *node
	v          any
	deps       []Dependency
	newDeps    bool // deps were asked for v (else n.deps stand)
	derived    []KeyValuePair
	hasDerived bool // the descriptor derives values
}

// skipInSync applies the shortcut to n, requested with v by the
// transaction itself (n.last is already the request): it tells whether
// n was in sync, and then records the request's objects on n and its
// derived values.
func (w *walker) skipInSync(n *node, v any) bool {
	if w.reverting() || w.kind.retry || len(w.s.unread) > 0 || len(w.s.resume) > 0 {
		return false
	}
	buf, ok := w.inSyncCheck(n, v, "", w.inSyncBuf[:0], 0)
	w.inSyncBuf = buf
	if !ok {
		clear(buf)
		return false
	}
	for i := range buf {
		e := &buf[i]
		m := e.n
		if !identical(m.want, e.v) || !identical(m.sb, e.v) || m.pub.st == nil || m.base == "" && !identical(m.pub.view.nb, e.v) {
			w.s.dirtyView(m) // what DumpValues shows is the request
		}
		// The southbound keeps what it holds (equal, but perhaps not
		// identical: a ValueComparator's equivalent): the SB view says so.
		m.setWant(e.v)
		if m.lastOp != OpUpdate {
			// Its walk would have chosen UPDATE (see appliedOp): only the
			// first request again after another operation changes its status.
			m.lastOp = OpUpdate
			w.s.dirty(m)
		}
		w.appliedHere(m)
		m.resetAttempts()
		if e.newDeps {
			// The same dependencies: indexed as they are.
			w.g.setDeps(m, e.deps, nil)
			m.depsFor = e.v
		}
		if e.hasDerived {
			m.derivedFor, m.derivedKVs = e.v, e.derived
			m.derivedWant, m.derivedSB = true, false
		}
	}
	clear(buf)
	return true
}

// inSyncCheck tells whether n, with v requested for it (derived from
// base, if any), is in sync (see the rule above), appending the entries
// of n and its derived values to buf.
func (w *walker) inSyncCheck(n *node, v any, base string, buf []inSyncEntry, depth int) ([]inSyncEntry, bool) {
	if n == nil || depth > inSyncDepth || n.dirty || n.base != base || n.origin != FromNB || n.dErr() != nil ||
		n.state != Configured || n.blocked() || n.retryGen() != 0 || n.err != nil || n.fields() != nil ||
		!n.exists() || !n.avail || n.deleting() || n.updating() || n.waitsOn() != "" || n.hasHeldAbsent() ||
		n.sbDeps != nil || n.depErr() != nil || w.touchedHere(n) || v == nil {
		return buf, false
	}
	if n.d == nil && base == "" {
		return buf, false
	}
	if len(w.s.waiters) > 0 && len(w.s.waiters[n.key]) > 0 {
		return buf, false
	}
	if d := n.d; d != nil {
		if d.Create == nil {
			return buf, false
		}
		if d.rejects(n.key, v) {
			return buf, false
		}
	}
	if !w.equal(n, n.sb, v) {
		return buf, false
	}
	e := inSyncEntry{n: n, v: v, deps: n.deps}
	if n.d != nil && n.d.Dependencies != nil {
		if n.depsFor == nil || !identical(n.depsFor, v) {
			deps, err := callDeps(n.d, n.key, v)
			if err != nil || checkDeps(deps) != nil || !sameDeps(n.deps, deps) {
				return buf, false
			}
			e.deps, e.newDeps = deps, true
		}
	} else if len(n.deps) > 0 {
		return buf, false
	}
	if !w.depsMet(n, nil) && !w.staysByOrdering(n) {
		return buf, false
	}
	if n.d != nil && n.d.DerivedValues != nil {
		e.hasDerived = true
		if n.derivedFor != nil && identical(n.derivedFor, v) {
			e.derived = n.derivedKVs
		} else {
			kvs, err := callDerived(n.d, n.key, v)
			if err != nil {
				return buf, false
			}
			e.derived = derivedList(n.key, kvs)
		}
	}
	if !sameDerivedKeys(e.derived, n.derived) {
		return buf, false
	}
	buf = append(buf, e)
	for _, kv := range e.derived {
		var ok bool
		if buf, ok = w.inSyncCheck(w.g.nodes[kv.Key], kv.Value, n.key, buf, depth+1); !ok {
			return buf, false
		}
	}
	return buf, true
}

// derivedList keeps, of the derived values kvs of the value at key, those
// with a key and a value other than key's own, sorted by key.
func derivedList(key string, kvs []KeyValuePair) []KeyValuePair {
	ok := true
	for i, kv := range kvs {
		if kv.Key == "" || kv.Value == nil || kv.Key == key || i > 0 && kvs[i-1].Key > kv.Key {
			ok = false
			break
		}
	}
	if ok {
		// Already as wanted (typically one derived value): the list is
		// kept as the descriptor returned it, only read from then on.
		return kvs[:len(kvs):len(kvs)]
	}
	out := kvs[:0:0]
	for _, kv := range kvs {
		if kv.Key != "" && kv.Value != nil && kv.Key != key {
			out = append(out, kv)
		}
	}
	slices.SortFunc(out, func(a, b KeyValuePair) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// sameDeps tells whether two lists of dependencies are the same: labels,
// keys, kinds and prefixes, in order. A key selector is a function, which cannot
// be compared: lists with one are never the same.
func sameDeps(a, b []Dependency) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := &a[i], &b[i]
		if x.Label != y.Label || x.Key != y.Key || x.Kind != y.Kind || !slices.Equal(x.AnyOf.KeyPrefixes, y.AnyOf.KeyPrefixes) ||
			x.AnyOf.KeySelector != nil || y.AnyOf.KeySelector != nil {
			return false
		}
	}
	return true
}
