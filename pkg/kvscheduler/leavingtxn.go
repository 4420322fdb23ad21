package kvscheduler

import (
	"math"
	"slices"
	"sort"
)

// The values of the transaction still to come, as providers to come for
// the predictions of leaving.go (see laterProvides).
//
// A value the transaction derives further on is a provider to come only
// if it may be created in the step: the walk creates a derived value once
// its own dependencies are met, and leaves it PENDING otherwise (adv5 fuzz
// seed 1206712, TestAdv19BDeleteOrderWhenTheNewDerivedProviderWaits: b/1
// re-created as w@1|~b/2 derives d/1 = dv-w@1|~b/2, which waits for
// b/2, which nothing provides; counted as a d/* provider to come, it hid
// that b/1's re-create takes a/2 = w|d/*,~a/1 away, and a/2 went after
// a/1). It is the question valueGoes asks of a value's Requires, asked
// of the derived value's dependencies (all of them while it does not
// exist: an ordering-only one gates creation too): met by a provider that
// may provide (see mayProvide) or by the transaction's values before the
// same place.

// anyLaterComes is anyLater for key k, where a value that derives k
// counts only if the derived value may come (see derivedMayCome).
func (w *walker) anyLaterComes(k string, indexes []int, before int) bool {
	for _, i := range indexes {
		if (before >= 0 && i >= before) || !w.laterValue(w.values[i]) {
			continue
		}
		// A key the transaction sets is judged as one it derives: by
		// its own dependencies (adv5 fuzz seed 2307489: b/2 = w@1|n/*,
		// set further on while nothing provides n/*, is no provider of
		// b/2 to come for a/2's update).
		v, derived := w.derivedAt[k][i]
		if !derived {
			v = w.values[i].value
		}
		if w.derivedMayCome(k, v, before) {
			return true
		}
	}
	return false
}

// derivedMayCome tells whether derived value v of key k, which a value of
// the transaction still to come derives, may be created in the step: its
// descriptor accepts it and each of its dependencies is met by a value that
// may provide, or by a value of the transaction before index before (-1:
// any). A key asked again, through a cycle of dependencies, may come (a
// cycle may be created as a whole); so may a value whose descriptor or
// dependencies cannot be known here, as before, but not one whose key
// more than one descriptor claims.
func (w *walker) derivedMayCome(k string, v any, before int) bool {
	d, err := w.s.reg.owner(k)
	if err != nil {
		// A key more than one descriptor claims is INVALID until a
		// registration changes (adv5 fuzz seed 7115935: a/3, claimed
		// twice, was counted a provider of a/* to come).
		return false
	}
	if d == nil || w.derivedAsked[k] {
		return true
	}
	if d.rejects(k, v) {
		return false
	}
	if d.Dependencies == nil {
		return true
	}
	deps, err := callDeps(d, k, v)
	if err != nil {
		return true
	}
	if w.derivedAsked == nil {
		w.derivedAsked = map[string]bool{}
	}
	w.derivedAsked[k] = true
	defer delete(w.derivedAsked, k)
	// A value that does not exist yet waits for every dependency, an
	// ordering-only one too (see DependencyKind); one that exists stays
	// by its Requires (see staysByOrdering).
	n := w.g.nodes[k]
	exists := n != nil && n.exists() && n.avail
	probe := &node{key: k}
	for _, dep := range deps {
		if exists && dep.Kind != Requires {
			continue
		}
		met := false
		w.g.providers(probe, dep, func(p *node) bool {
			met = p.key != k && w.mayProvide(p, nil)
			return !met
		})
		if !met && !w.laterProvides(dep, nil, before) {
			return false
		}
	}
	return true
}

// laterProvides tells whether a value of the transaction still to be
// applied (at an index below before, unless it is -1) sets or derives a
// key that meets dep (see txnKeys), passing over the keys skip names
// (onlyProviders' providers that exist, which it judges by their nodes).
func (w *walker) laterProvides(dep Dependency, skip func(key string) bool, before int) bool {
	keys := w.txnKeys()
	if dep.Key != "" {
		return (skip == nil || !skip(dep.Key)) && w.anyLaterComes(dep.Key, keys[dep.Key], before)
	}
	for k, at := range keys {
		if dep.matchesKey(k) && (skip == nil || !skip(k)) && w.anyLaterComes(k, at, before) {
			return true
		}
	}
	return false
}

// laterComesAt returns the least index of the transaction's values still
// to be applied that sets or derives a key that meets dep and may come
// (see anyLaterComes), skip's keys passed over; math.MaxInt when there is
// none. The provider is there from that request on, not before: a
// provider that leaves before it leaves a gap (see depGap;
// TestAdv24ProviderCreatedAfterTheCascadeDoesNotSpareADependent: a/3,
// created after b/1's delete, whose cascade takes a/1 down, does not
// keep r/2 = w|a/*,~d/2 in place). A provider whose own dependencies a
// later request meets comes only then (see comesFrom).
func (w *walker) laterComesAt(dep Dependency, skip func(key string) bool) int {
	first := math.MaxInt
	at := func(k string, indexes []int) {
		if skip(k) {
			return
		}
		for _, i := range indexes {
			if i < first && w.anyLaterComes(k, []int{i}, -1) {
				first = min(first, w.comesFrom(k, i))
			}
		}
	}
	keys := w.txnKeys()
	if dep.Key != "" {
		// One key: no walk over every key the transaction sets (a
		// transaction of thousands asks this per dependency).
		at(dep.Key, keys[dep.Key])
		return first
	}
	for k, indexes := range keys {
		if dep.matchesKey(k) {
			at(k, indexes)
		}
	}
	return first
}

// comesFrom returns the index of the request from which key k, set or
// derived by the transaction's value i (one that may come, see
// anyLaterComes), may be there: i itself when its dependencies are met by
// what is there or by the requests up to i, otherwise the first request
// after i up to which they are. The walk leaves a new value PENDING until
// what it waits for comes, and creates it then
// (TestAdv28NewProviderWaitingForALaterRequestDoesNotComeAtItsOwn: b/10 =
// v|d/3, set at 1, waits for d/3, which b/3's update at 3 derives, and
// does not keep a/5 = v|b/1*,~a/1 while b/1 goes at 2). Whether the
// dependencies are met only grows with the requests counted, so the
// first index is found by bisection.
func (w *walker) comesFrom(k string, i int) int {
	if w.anyLaterComes(k, []int{i}, i+1) {
		return i
	}
	rest := len(w.values) - i - 1
	j := sort.Search(rest, func(d int) bool { return w.anyLaterComes(k, []int{i}, i+d+2) })
	// (None found cannot be, as -1 asked the same as len(values); the
	// last index, then, is the latest known.)
	return i + 1 + min(j, rest-1)
}

// anyLater tells whether one of the transaction's values at indexes is
// still to be applied. One applied already is what it is: its node tells
// (see mayBeMet).
func (w *walker) anyLater(indexes []int, before int) bool {
	for _, i := range indexes {
		if (before < 0 || i < before) && w.laterValue(w.values[i]) {
			return true
		}
	}
	return false
}

// txnKeys returns the keys the transaction's values set (to a value, not
// a delete) or derive, and what those derive in turn, each with the
// indexes of the values that set or derive it, made at the first call: a
// dependency on one of them may be met by the transaction while one of
// those values is still to be applied.
func (w *walker) txnKeys() map[string][]int {
	if w.provides != nil {
		return w.provides
	}
	w.provides = make(map[string][]int)
	w.derivedAt = make(map[string]map[int]any)
	type kv struct {
		key   string
		value any
		at    int
	}
	var queue []kv
	for i, v := range w.values {
		if v.value != nil {
			queue = append(queue, kv{v.key, v.value, i})
		}
	}
	for len(queue) > 0 {
		x := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		if slices.Contains(w.provides[x.key], x.at) {
			continue // derived again through a cycle of derivations
		}
		w.provides[x.key] = append(w.provides[x.key], x.at)
		if x.key != w.values[x.at].key {
			if w.derivedAt[x.key] == nil {
				w.derivedAt[x.key] = make(map[int]any)
			}
			w.derivedAt[x.key][x.at] = x.value
		}
		d, err := w.s.reg.owner(x.key)
		if d == nil || err != nil || d.DerivedValues == nil {
			continue
		}
		kvs, err := callDerived(d, x.key, x.value)
		if err != nil {
			continue
		}
		for _, c := range kvs {
			queue = append(queue, kv{c.Key, c.Value, x.at})
		}
	}
	return w.provides
}
