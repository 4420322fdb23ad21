package dependents

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/lariat-dev/lariat/pkg/eventloop"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// The loop's picture of what it put into the scheduler must be what was
// committed. An event changes the picture as it computes (what is desired
// for each owner, which owner keeps each object, the refusals, the objects
// being updated or deleted, the held values, the reports); a transaction
// that is then not committed (this handler aborts the event, a later
// handler of a joined loop does, a resync cannot read what it must hold)
// must leave the picture as the last committed transaction left it.
// Otherwise the next event judges from values the scheduler never got: a
// requirer is created on a readiness marker the aborted event withdrew, a
// held object is written back after an aborted resync dropped its held
// value.
//
// undoLog records, for one transaction, what each entry it changes held
// before, the first time it changes it; TxnDone puts them back when the
// transaction was not committed. Per entry, not a copy of the picture, so
// that an event costs what it touches, not the number of owners. What the
// loop learned of the API server in the event (owners and objects seen,
// deletions seen) is a fact, kept either way: entries are recorded only
// after the event's change was read into the picture.
type undoLog struct {
	owners   map[string]ownerWas
	objects  map[string]objectWas
	refusals uint64
	synced   bool
	resync   bool // a resync, which computes every owner
}

// ownerWas is an owner's part of the picture before the transaction.
type ownerWas struct {
	desired    *desired // never changed in place once put (see desired.clone)
	hasDesired bool
	reads      map[string]bool
	failed     string
	hasFailed  bool
}

// objectWas is an object's part of the picture before the transaction.
type objectWas struct {
	childOf     string
	hasChildOf  bool
	refused     map[string]uint64
	updating    uint64
	hasUpdating bool
	gone        types.UID
	hasGone     bool
	live        runtime.Object
}

// abortOnPanic, deferred by Update and Resync, turns a panic in the
// registration's own code into an abort of the event. The loop takes a
// handler's panic for a plain error and commits what was put: a resync
// cut short would commit without the owners it had not put yet, and the
// scheduler would delete their objects. Aborted, nothing is committed,
// the picture is put back (TxnDone), and the loop heals.
func (h *loopHandler[T]) abortOnPanic(err *error) {
	if r := recover(); r != nil {
		*err = eventloop.NewAbortEventError(fmt.Errorf("dependents %s: panic: %v\n%s", h.name, r, debug.Stack()))
	}
}

// retryHold holds the scheduler's retries while owners are stale. The
// scheduler acts on its own (it retries failed values) with what the last
// committed transaction gave it; a stale owner's verdict since (a marker
// withdrawn) is not in it, and a retry would create a requirer on that
// marker. The event pushed to compute the stale owners again
// (computeStaleSoon) may fail to queue, or wait behind other events (a
// user's, slow, on a joined loop); held, the retries wait for the
// transaction that computes them. The hold is set and cleared on the
// loop's goroutine, and released from another once a joined loop exits.
type retryHold struct {
	mu      sync.Mutex
	release func()
}

// set holds (hold) or releases the retries of sched.
func (r *retryHold) set(sched *kvscheduler.Scheduler, hold bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case hold && r.release == nil:
		r.release = sched.HoldRetries()
	case !hold && r.release != nil:
		r.release()
		r.release = nil
	}
}

// computeStaleSoon pushes an event that computes the stale owners again,
// queued behind the aborted one: the scheduler acts on its own too (it
// retries failed values), and a retry must not create a requirer on a
// marker the aborted event judged gone before any event withdraws it.
// Should the push fail (a full queue), the next event that computes an
// owner computes them first all the same.
func (h *loopHandler[T]) computeStaleSoon() {
	l := h.loop.Load()
	if l == nil || len(h.stale) == 0 {
		return
	}
	if err := l.PushEvent(&computeAgain{keys: slices.Sorted(maps.Keys(h.stale)), afterAbort: true}); err != nil {
		h.log.WithError(err).Debugf("dependents %s: the owners an aborted event computed are computed again with the next event", h.name)
	}
}

// staleFirst returns keys after the owners an undone transaction computed
// (see TxnDone), in key order: those are computed again first.
func (h *loopHandler[T]) staleFirst(keys []string) []string {
	if len(h.stale) == 0 {
		return keys
	}
	return append(slices.Sorted(maps.Keys(h.stale)), keys...)
}

// beginTxn starts the undo log of the event's transaction.
func (h *loopHandler[T]) beginTxn(resync bool) {
	h.undo = &undoLog{owners: map[string]ownerWas{}, objects: map[string]objectWas{}, refusals: h.refusals, synced: h.synced, resync: resync}
	h.reports.begin()
	h.held.begin()
}

// TxnDone implements eventloop.TxnObserver: a transaction not committed
// leaves the picture as it was before it, and an event missed (aborted
// before this handler was called) holds every update until a resync.
func (h *loopHandler[T]) TxnDone(ev eventloop.Event, committed bool) {
	u := h.undo
	h.undo = nil
	h.holding = false
	if u == nil {
		if !committed {
			// Never called: a handler before this one (a user's, on a
			// joined loop) aborted the event. What it brought (an owner or
			// an object changed, a fact) never reached the picture, and
			// nothing says which owners it touched: no update computes an
			// owner on that picture until a resync reads it all again.
			h.synced = false
			if !ev.Method().IsResync() {
				// A resync aborted is healed by the loop, with its
				// backoff; asked for again at once, each aborted one
				// would ask for the next (h27e's storm).
				h.requestResync()
			}
		}
		return
	}
	if committed {
		for key := range u.owners {
			delete(h.stale, key)
		}
		if u.resync {
			clear(h.stale)
		}
		if len(h.stale) == 0 {
			h.retryHold.set(h.sched, false)
		}
		h.reports.commit()
		h.held.commit()
		return
	}
	// What the undone transaction judged of these owners is lost with it,
	// though what it judged from (the objects as the API server shows
	// them) is still true: an owner judged not ready, its marker
	// withdrawn, must not be read as ready by the next event. Each is
	// computed again first by the next event that computes any owner (see
	// applyAll), without waiting for the healing resync.
	for key := range u.owners {
		h.stale[key] = true
	}
	h.retryHold.set(h.sched, len(h.stale) > 0)
	if c, ok := ev.(*computeAgain); !ok || !c.afterAbort {
		// Once: the event that computes them again aborting too (the
		// same record still refused) pushes none, or each would abort
		// in turn and the loop would spin past the after-error
		// healing's delay; the next event and that healing compute them.
		h.computeStaleSoon()
	}
	for key, was := range u.owners {
		restore(h.desired, key, was.desired, was.hasDesired)
		restore(h.reads, key, was.reads, was.reads != nil)
		restore(h.failed, key, was.failed, was.hasFailed)
	}
	for key, was := range u.objects {
		restore(h.childOf, key, was.childOf, was.hasChildOf)
		restore(h.refused, key, was.refused, was.refused != nil)
		restore(h.updating, key, was.updating, was.hasUpdating)
		restore(h.gone, key, was.gone, was.hasGone)
		restore(h.live, key, was.live, was.live != nil)
	}
	h.refusals, h.synced = u.refusals, u.synced
	h.held.rollback()
	h.reports.rollback()
}

// restore sets m[key] to v, or deletes it when it had none.
func restore[V any](m map[string]V, key string, v V, had bool) {
	if had {
		m[key] = v
	} else {
		delete(m, key)
	}
}

// saveOwner records the owner at key's part of the picture, before the
// transaction first changes it.
func (h *loopHandler[T]) saveOwner(key string) {
	if h.undo == nil {
		return
	}
	if _, ok := h.undo.owners[key]; ok {
		return
	}
	d, hasD := h.desired[key]
	f, hasF := h.failed[key]
	h.undo.owners[key] = ownerWas{desired: d, hasDesired: hasD, reads: maps.Clone(h.reads[key]), failed: f, hasFailed: hasF}
}

// saveObject records the object at key's part of the picture, before the
// transaction first changes it.
func (h *loopHandler[T]) saveObject(key string) {
	if h.undo == nil {
		return
	}
	if _, ok := h.undo.objects[key]; ok {
		return
	}
	c, hasC := h.childOf[key]
	u, hasU := h.updating[key]
	g, hasG := h.gone[key]
	h.undo.objects[key] = objectWas{childOf: c, hasChildOf: hasC, refused: maps.Clone(h.refused[key]),
		updating: u, hasUpdating: hasU, gone: g, hasGone: hasG, live: h.live[key]}
}

// requestResync asks the loop for a resync, which ends the wait of a
// registration that missed an event (see TxnDone). The loop heals an
// aborted event by a resync of its own only for some events: an aborted
// BestEffortIgnoreErrors event and a reverted RevertOnFailure one get
// none, and its periodic healing (a DownstreamResync) reaches no handler.
// So it asks as POST /controller/resync does, off the loop's goroutine
// (the bridge's resync snapshots the caches), once at a time, again with
// a growing delay while the queue is full, until the loop exits.
func (h *loopHandler[T]) requestResync() {
	l := h.loop.Load()
	if l == nil || !h.resyncAsked.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer h.resyncAsked.Store(false)
		ctx, cancel := context.WithCancel(context.Background()) // ended by the loop's exit, below
		defer cancel()
		go func() {
			select {
			case <-l.Exited():
				cancel()
			case <-ctx.Done():
			}
		}()
		for delay := time.Second; ; delay = min(2*delay, 30*time.Second) {
			err := l.RequestResync(ctx)
			if err == nil || ctx.Err() != nil || errors.Is(err, eventloop.ErrClosed) {
				return
			}
			h.log.WithError(err).Debugf("dependents %s: a resync after a missed event, asked again in %v", h.name, delay)
			select {
			case <-time.After(delay):
			case <-ctx.Done():
				return
			}
		}
	}()
}
