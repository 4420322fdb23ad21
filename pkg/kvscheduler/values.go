package kvscheduler

import (
	"reflect"
	"slices"
)

// What the walk asks descriptors about values: dependencies, derived
// values, equality, whether an update takes a re-create.

// sbEqual is what is known of whether a node's value in the southbound
// equals its wanted value, so that a comparison made once is not asked of
// the comparator again.
type sbEqual int8

const (
	sbEqualUnknown sbEqual = iota // ask the comparator
	sbEqualYes
	sbEqualNo
)

// setDeps computes (once per wanted value) and indexes n's dependencies.
func (w *walker) setDeps(n *node) { w.setDepsEq(n, sbEqualUnknown) }

// setDepsEq is setDeps, given what is known of whether n.sb equals n.want.
func (w *walker) setDepsEq(n *node, eq sbEqual) {
	if n.depsFor != nil && identical(n.depsFor, n.want) {
		// The same value as before: same dependencies.
		if sb := w.sbDepsEq(n, eq); sb != nil || n.sbDeps != nil {
			w.g.setDeps(n, n.deps, sb)
		}
		return
	}
	// Only what the descriptor was asked is kept: a value without a
	// descriptor or owned by the southbound has no dependencies now, but
	// may have once it is claimed or requested.
	n.depsFor = nil
	var deps []Dependency
	var err error
	if n.d != nil && n.d.Dependencies != nil && n.origin != FromSB {
		n.depsFor = n.want
		deps, err = callDeps(n.d, n.key, n.want)
		if err == nil {
			err = checkDeps(deps)
		}
		if err != nil {
			deps = nil
		}
	}
	n.setDepErr(err)
	w.g.setDeps(n, deps, w.sbDepsEq(n, eq))
}

// sbDepsEq returns the dependencies of the value in the southbound, when
// it is not the wanted one, given what is known of whether n.sb equals
// n.want.
func (w *walker) sbDepsEq(n *node, eq sbEqual) []Dependency {
	if n.sb == nil || n.d == nil || n.d.Dependencies == nil || n.origin == FromSB {
		return nil
	}
	if n.want != nil && (eq == sbEqualYes || eq == sbEqualUnknown && w.equal(n, n.sb, n.want)) {
		return nil
	}
	deps, err := callDeps(n.d, n.key, n.sb)
	if err != nil || deps == nil {
		return []Dependency{} // non-nil: the value in the southbound needs nothing
	}
	return deps
}

// syncSBDeps re-indexes the dependencies of the value in the southbound
// after it changed.
func (w *walker) syncSBDeps(n *node) { w.syncSBDepsEq(n, sbEqualUnknown) }

// syncSBDepsEq is syncSBDeps, given what is known of whether n.sb equals
// n.want. Right after an operation that set n.sb to n.want, they are the
// same value, which equals itself (as safeEqual takes the same pointer
// twice to be equal without asking the comparator).
func (w *walker) syncSBDepsEq(n *node, eq sbEqual) {
	if sb := w.sbDepsEq(n, eq); sb != nil || n.sbDeps != nil {
		w.g.setDeps(n, n.deps, sb)
	}
}

// derivedOf returns the derived values of n.want, sorted by key.
func (w *walker) derivedOf(n *node) []KeyValuePair {
	if n.d == nil || n.d.DerivedValues == nil {
		return nil
	}
	if n.derivedFor != nil && (n.derivedWant || identical(n.derivedFor, n.want)) {
		n.derivedWant = true
		return n.derivedKVs // the same value as before derives the same
	}
	kvs, err := callDerived(n.d, n.key, n.want)
	if err != nil {
		return nil
	}
	out := derivedList(n.key, kvs)
	n.derivedFor, n.derivedKVs = n.want, out
	n.derivedWant, n.derivedSB = true, false
	return out
}

// setWant sets the value the key should have: what its derived values
// were computed from is no longer known to be it.
func (n *node) setWant(v any) {
	n.want, n.derivedWant = v, false
}

// setSB sets the value believed in the southbound: what its derived
// values were computed from is no longer known to be it.
func (n *node) setSB(v any) {
	n.sb, n.derivedSB = v, false
}

// setSBToWant records that the southbound holds the wanted value: it
// derives what the wanted value derives.
func (n *node) setSBToWant() {
	n.sb, n.derivedSB = n.want, n.derivedWant
}

// pushDerived applies the derived values of n right after it, in key
// order. Obsolete ones were deleted before (see update); those whose
// delete failed stay listed, so that the retry of n deletes them again.
func (w *walker) pushDerived(n *node, derived []KeyValuePair) {
	w.takeOver(n, derived)
	var obsolete []string
	if !sameDerivedKeys(derived, n.derived) {
		// Derived values the new value does not derive and that are in
		// the southbound (a read found them while their base was gone)
		// go first, as the reference's create deletes them. So does one
		// still wanted that a read found gone with its base: nothing
		// derives it now, and left wanted it stays reported CONFIGURED
		// without being held (seed 13222693).
		for _, k := range n.derived {
			if c := w.obsoleteDerived(n, k); c != nil && !hasKey(derived, k) {
				obsolete = append(obsolete, k)
			}
		}
		w.setDerivedKeys(n, derived)
	} // else the list would be built again as it is (an unchanged value)
	for _, kv := range slices.Backward(derived) {
		w.push(frame{kind: fApply, key: kv.Key, value: kv.Value, base: n.key, origin: n.origin})
	}
	for _, k := range slices.Backward(obsolete) {
		w.push(frame{kind: fApply, key: k, base: n.key, origin: n.origin})
	}
}

// obsoleteDerived returns the derived value under key k that n lists and
// that must go when n's new value does not derive it: held (and not
// already going), or still wanted though gone. Nil if neither.
func (w *walker) obsoleteDerived(n *node, k string) *node {
	c := w.g.nodes[k]
	if c == nil || c.base != n.key || c.deleting() {
		return nil
	}
	if c.exists() || c.want != nil {
		return c
	}
	return nil
}

// dropStrayDerived deletes the derived values of n that the southbound
// holds while n is not there and is not created now (it waits): a read
// found them while their base was gone. A derived value exists only with
// its base, so they go, as they would with a create of n that no longer
// derives them (see pushDerived). So do those still wanted that a read
// found gone with n: they are not there, and nothing derives them while n
// waits (TestAdv31FullResyncLeavesNoDerivedValueConfiguredUnderAPendingBase).
func (w *walker) dropStrayDerived(n *node) {
	for _, k := range slices.Backward(n.derived) {
		if c := w.obsoleteDerived(n, k); c != nil {
			w.push(frame{kind: fApply, key: k, base: n.key, origin: n.origin})
		}
	}
}

// dropGoneDerived drops the derived values of n, left INVALID or
// UNIMPLEMENTED instead of created, that are still wanted though a read
// found them gone with n: nothing derives them while n is not there, and
// left wanted they are reported CONFIGURED without being held
// (TestAdv31InvalidBaseLeavesNoDerivedValueConfigured). Those the
// southbound holds are left as they were.
func (w *walker) dropGoneDerived(n *node) {
	for _, k := range slices.Backward(n.derived) {
		if c := w.obsoleteDerived(n, k); c != nil && !c.exists() {
			w.push(frame{kind: fApply, key: k, base: n.key, origin: n.origin})
		}
	}
}

// sameDerivedKeys tells whether keys (sorted) are the keys of derived
// (sorted by key), in order.
func sameDerivedKeys(derived []KeyValuePair, keys []string) bool {
	if len(derived) != len(keys) {
		return false
	}
	for i, kv := range derived {
		if kv.Key != keys[i] {
			return false
		}
	}
	return true
}

// setDerivedKeys lists, as n's derived values, those of derived and the
// ones listed before that still exist.
func (w *walker) setDerivedKeys(n *node, derived []KeyValuePair) {
	left := false // an obsolete derived value still there stays listed
	for _, k := range n.derived {
		if c := w.g.nodes[k]; c != nil && c.exists() && !hasKey(derived, k) {
			left = true
			break
		}
	}
	if len(derived) == 1 && !left {
		// The common case, kept in the node: no allocation. It is safe
		// because no code keeps a node's list across a change of it (the
		// frames of a walk hold keys, not lists).
		n.derivedOne[0] = derived[0].Key
		n.derived = n.derivedOne[:]
		w.s.noteHeldBase(n)
		return
	}
	keys := make([]string, 0, len(derived))
	for _, kv := range derived {
		keys = append(keys, kv.Key)
	}
	for _, k := range n.derived {
		if c := w.g.nodes[k]; c != nil && c.exists() && !hasKey(derived, k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	n.derived = keys
	w.s.noteHeldBase(n)
}

// sameRequest tells whether two requested values (nil: none) are the same.
func (w *walker) sameRequest(n *node, a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return w.equal(n, a, b)
}

func deepEqual(a, b any) (eq bool) {
	_ = guard(func() error { eq = reflect.DeepEqual(a, b); return nil })
	return eq
}

func (w *walker) equal(n *node, a, b any) bool {
	if n.d == nil {
		return samePointer(a, b) || deepEqual(a, b)
	}
	return safeEqual(n.d, n.key, a, b)
}

// needsRecreate asks whether changing n to v takes a delete and a create.
func (w *walker) needsRecreate(n *node, v any) (re bool) {
	if n.d.UpdateWithRecreate == nil {
		return false
	}
	w.s.calling(n.d, "UpdateWithRecreate", n.key)
	defer w.s.returned()
	_ = guard(func() error { re = n.d.UpdateWithRecreate(n.key, n.sb, v, n.metadata); return nil })
	return re
}

func hasKey(kvs []KeyValuePair, k string) bool {
	for _, kv := range kvs {
		if kv.Key == k {
			return true
		}
	}
	return false
}
