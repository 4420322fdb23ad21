package kvscheduler

import "slices"

// Deferred deletes: the end of a delete that a value still needs, while
// that value's own delete is under way or the cycle it is a member of is
// being created, waits for it rather than fail.

// deferDelete defers the end of n's delete (frame f) until the delete
// under way of blocker, a value that still needs n, concludes: the walk
// pushed blocker's delete before n's finish but reaches n's finish first
// (a base whose derived value's delete is under way below, a derived
// value deleted again by its base's delete while its dependents' deletes
// are under way below). The deferred finish runs again right after
// blocker's, and nothing is recorded until then: failing it and waiting
// for blocker as for a failed dependent reported a failure for a delete
// that went through in the same transaction (seed 16 of TestRandomGraphs
// with -kvspurious, TestDeleteUnderWayIsNotReportedFailed), and made a
// transaction with revert revert. A finish deferred once in a drain that
// runs out is checked as it is (see drain).
//
// A blocker created in the walk as a member of a cycle counts on members
// not created yet (the other provider of what it needs from n, often):
// the finish is deferred until the walk has nothing else to do (see
// drain), and the blocker then has them, or is checked as a failed
// dependent would be (seed 22745: the retry that re-created a/g0/2 made
// a/g1/1, a cycle member with it, before a/g0/0's delete ended, refused
// it for a/g1/1 and only then created a/g0/2, leaving a/g0/0 in the
// southbound until its next retry).
func (w *walker) deferDelete(f frame, blocker string) bool {
	b := w.g.nodes[blocker]
	if f.noDefer || b == nil || !b.deleting() && !slices.Contains(w.cycleMade, b) {
		return false
	}
	f.n.under |= underDelete // still under way
	w.deferred = append(w.deferred, deferredFinish{blocker: blocker, f: f})
	return true
}

// deferredFinish is the end of a delete deferred until the delete of
// blocker concludes.
type deferredFinish struct {
	blocker string
	f       frame
}

// releaseDeferred pushes the finishes deferred until key's delete
// concluded, to run next, in the order they were deferred.
func (w *walker) releaseDeferred(key string) {
	var fs []frame
	w.deferred = slices.DeleteFunc(w.deferred, func(d deferredFinish) bool {
		if d.blocker == key {
			fs = append(fs, d.f)
			return true
		}
		return false
	})
	for _, f := range slices.Backward(fs) {
		w.push(f)
	}
}

// flushDeferred pushes every deferred finish, to run in the order they
// were deferred and not to be deferred again: the drain ran out with
// deletes still deferred. That is how a delete deferred for a member of a
// cycle being created ends (see deferDelete); for deletes waiting on one
// another, no known sequence gets here (those waiting through a cycle are
// let go together by stillNeeded first: TestDeleteCycleThroughDerivedValue).
// Each finish is checked as a failed dependent's would be, so a value
// still needed is kept and reported, never deleted under it.
func (w *walker) flushDeferred() {
	for _, d := range slices.Backward(w.deferred) {
		d.f.noDefer = true
		w.push(d.f)
	}
	w.deferred = nil
}
