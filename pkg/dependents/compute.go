package dependents

import (
	"fmt"
	"slices"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// Computing an owner: its handler's objects become what is desired for
// it (claims, latch, readiness, held objects), or, when the handler
// fails, what was last desired is kept and the failure reported.

// noteOutcome logs the failure of the computation of the owner at
// ownerKey (see noteFailure), or forgets the last one once it succeeded.
func (h *loopHandler[T]) noteOutcome(ownerKey string, err error) {
	if err == nil {
		delete(h.failed, ownerKey)
		return
	}
	h.noteFailure(ownerKey, err, h.desired[ownerKey] != nil)
}

// noteFailure logs the handler's failure for the owner at ownerKey at
// warning the first time it fails so, and at debug while the same error
// repeats: an owner is computed again whenever anything it reads changes,
// and a failure that lasts (an object of a kind outside Options.Kinds,
// say) would otherwise fill the log, or, logged only at debug, leave the
// owner's condition as the one place that tells.
func (h *loopHandler[T]) noteFailure(ownerKey string, err error, kept bool) {
	what := "nothing is applied for it"
	if kept {
		what = "its objects are kept as they were"
	}
	log := h.log.WithError(err)
	if h.failed[ownerKey] == err.Error() {
		log.Debugf("dependents %s: %s: the handler failed again; %s", h.name, ownerKey, what)
		return
	}
	h.failed[ownerKey] = err.Error()
	log.Warnf("dependents %s: %s: the handler failed; %s", h.name, ownerKey, what)
}

// buildDesired builds the desired state of the owner at key from the
// handler's objects. A panic in the objects' own methods (copying an
// unstructured object that holds a Go int, not a JSON number, panics) is
// the owner's error, as a panic in the handler is: left to abortOnPanic it
// would abort every event and healing resync that computes the owner, and
// no owner would be handled again.
func (h *loopHandler[T]) buildDesired(key string, owner T, objs []*Object) (d *desired, err error) {
	defer func() {
		if r := recover(); r != nil {
			d, err = nil, fmt.Errorf("its objects panicked when prepared: %v", r)
		}
	}()
	c := claimer{ownerKind: h.build.ownerGVK.Kind, childOf: h.childOf, live: h.live, ownerUID: h.ownerUID}
	uid := string(owner.GetUID())
	return h.build.desired(key, owner, objs, h.live, func(objKey string) (string, string) {
		return c.claim(key, uid, objKey)
	}, func(other string) []string {
		// Computed again when the other owner is (see readersOf).
		h.noteRead(key, ownerRead(other))
		return h.objectsOf(other)
	})
}

// compute runs the handler for the owner at key and records what is
// desired for it; on error the previous desired state is kept.
func (h *loopHandler[T]) compute(key string) error {
	h.saveOwner(key)
	owner := h.owners[key]
	if ns := owner.GetNamespace(); h.namespace != "" && ns != "" && ns != h.namespace {
		// The scheduler reads objects only in Options.Namespace: one
		// created elsewhere would never be read back, so never deleted
		// after a restart. Such an owner is refused, and not an error of
		// the resync (its objects, if any, are not the registration's).
		h.reports.set(key, owner.GetUID(), owner.GetGeneration(), nil,
			fmt.Errorf("owner %s is outside Options.Namespace %q: its objects are not kept", key, h.namespace))
		return nil
	}
	if owner.GetDeletionTimestamp() != nil {
		return computeDeleting(h, key, owner)
	}
	delete(h.reads, key) // what it reads now is recorded anew
	objs, err := callHandler(h, key, owner)
	var d *desired
	if err == nil {
		d, err = h.buildDesired(key, owner, objs)
	}
	prev := h.desired[key]
	if prev != nil && prev.uid != string(owner.GetUID()) {
		// Deleted and created again under its name, seen as one change (the
		// loop's queue or the owner kind's worker coalesced them, or a
		// resync's snapshot): another owner. The old one's claims, refusals
		// and latch are not the new one's; what it kept and the new one
		// does not want is withdrawn by the caller (apply, or the resync).
		h.forget(key)
		prev = nil
	}
	// The latched marker waits (PENDING) once the owner's requirements
	// failed: the latch is let go, and taken again when every object is
	// ready again.
	failed := h.sched.GetValueStatus(h.k.available(key)).State == kvscheduler.Pending
	if err != nil {
		err = fmt.Errorf("owner %s: %w", key, err)
		if prev != nil && prev.held {
			err = heldNote(err, len(prev.objects))
		}
		if prev != nil {
			// Judged again in a copy: prev is what the last committed
			// transaction put (see undo.go).
			prev = prev.clone()
			h.desired[key] = prev
			prev.err = err
			h.build.refreshReadiness(key, prev, h.live)
			h.build.latch(key, prev, prev.available && prev.uid == string(owner.GetUID()), failed)
		}
		h.reports.set(key, owner.GetUID(), owner.GetGeneration(), h.desired[key], err)
		return err
	}
	d.leaving = h.leavingOf(key, prev, d)
	h.markUpdates(prev, d)
	h.holdNew(key, prev, d)
	// First computed at a resync, it inherits the latch the live objects
	// show it had before the restart (see before.go).
	was := prev != nil && prev.available && prev.uid == d.uid ||
		prev == nil && h.before.marked(key, d.uid, h.k.available(key))
	h.build.latch(key, d, was, failed)
	since := h.refusedSince(key, prev)
	h.unclaim(key)
	for objKey := range d.claimedKeys() {
		h.saveObject(objKey)
		h.childOf[objKey] = key
	}
	h.noteRefusals(key, d, since)
	h.unhold(prev)
	h.desired[key] = d
	h.reports.set(key, owner.GetUID(), owner.GetGeneration(), d, nil)
	return nil
}

// objectsOf returns the keys of the objects the owner at key keeps, in
// key order.
func (h *loopHandler[T]) objectsOf(key string) []string {
	d := h.desired[key]
	if d == nil {
		return nil
	}
	return slices.Sorted(d.claimedKeys())
}

// ownerUID returns the UID of the owner at key, if the loop knows it.
func (h *loopHandler[T]) ownerUID(key string) (string, bool) {
	o, ok := h.owners[key]
	if !ok {
		return "", false
	}
	return string(o.GetUID()), true
}

// forget drops what is known of the owner at key.
func (h *loopHandler[T]) forget(key string) {
	h.saveOwner(key)
	h.unhold(h.desired[key])
	h.unclaim(key)
	delete(h.desired, key)
	delete(h.reads, key)
	delete(h.failed, key)
	h.reports.drop(key)
}
