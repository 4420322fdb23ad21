package dependents

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/sirupsen/logrus"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/lariat-dev/lariat/pkg/eventloop"
	"github.com/lariat-dev/lariat/pkg/eventloop/kubebridge"
	"github.com/lariat-dev/lariat/pkg/generic"
	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// Handler returns the desired objects of owner, a copy it may read but
// must not keep. An error leaves the owner's objects as they were last
// desired (and is reported in its status); it never deletes them.
type Handler[T generic.RuntimeMetaObject] func(owner T) ([]*Object, error)

// loopHandler is the registration's only event loop handler: it keeps the
// loop's picture of the owners and of their objects as the API server
// shows them, runs the user's handler for the owners an event touches,
// and puts their objects and readiness markers into the transaction. Only
// the loop's goroutine uses it.
type loopHandler[T generic.RuntimeMetaObject] struct {
	name         string
	k            keys
	build        *builder[T]
	handler      ViewHandler[T]
	reads        map[string]map[string]bool     // owner key -> what its handler read through its View (see readersOf)
	ownerRes     string                         // the owner kind's resource name in the bridge's state
	namespace    string                         // Options.Namespace: owners elsewhere are refused
	fieldManager string                         // Options.FieldManager: the label of the registration's objects
	childRes     map[string]bool                // the children's resource names
	owners       map[string]T                   // owner key -> owner
	live         map[string]runtime.Object      // object key -> object on the server
	gone         map[string]types.UID           // object key -> UID the loop deleted (see dropDeleted)
	desired      map[string]*desired            // owner key -> what was last put for it
	childOf      map[string]string              // object key -> owner key
	refused      map[string]map[string]uint64   // object key -> owners refused it (see claimer), with when: computed again, first refused first, when it changes
	refusals     uint64                         // the last refusal's number (see noteRefusals)
	updating     map[string]uint64              // object key -> the last landing before the loop changed it, until seen where it landed (see markUpdates)
	landings     *kubedescriptor.Landings       // where the descriptors' writes landed (see updating.go)
	holding      bool                           // the event held a new object for an update: push updatesLanded
	held         *heldValues                    // the values of held owners, which the descriptors never apply (see held.go)
	reports      *reports                       // what the status handler reads
	get          liveGetter                     // reads an object a held owner keeps (see held.go)
	list         liveLister                     // reads the objects that vouch for a marker (see vouch.go)
	patch        annotationPatcher              // records on a held object the markers it is kept without (see heldwithout.go)
	sched        *kvscheduler.Scheduler         // for repairs and View.Failure
	fails        *failWatch                     // the keys whose failure a handler read (View.Failure)
	before       *beforeRestart                 // during a resync: the markers the live objects show were put (see before.go)
	synced       bool                           // a resync went through (see Update)
	repairDrift  bool                           // Options.RepairDrift
	failed       map[string]string              // owner key -> the handler's error last logged at warning (see noteFailure)
	undo         *undoLog                       // what the event's transaction changed of the picture (see undo.go)
	stale        map[string]bool                // owners whose computation a transaction not committed lost (see TxnDone)
	loop         atomic.Pointer[eventloop.Loop] // the loop it runs in, to compute stale owners again at once
	retryHold    retryHold                      // the scheduler's retries held while owners are stale
	resyncAsked  atomic.Bool                    // a resync asked for after a missed event, not yet pushed
	log          logrus.FieldLogger             // one line per owner whose readiness changed
}

// String implements eventloop.EventHandler.
func (h *loopHandler[T]) String() string { return "dependents-" + h.name }

// HandlesEvent implements eventloop.EventHandler.
func (h *loopHandler[T]) HandlesEvent(eventloop.Event) bool { return true }

// Revert implements eventloop.EventHandler: the bridge's events are
// best-effort and never reverted.
func (h *loopHandler[T]) Revert(eventloop.Event) error { return nil }

// Resync implements eventloop.EventHandler: every owner is computed again
// from the bridge's snapshot, and everything desired is put (the
// scheduler deletes what is not). An owner whose handler fails keeps what
// was last desired for it; at the first resync nothing is known of it, and
// if objects of it exist it is held: its objects are put as they are (see
// held.go). Only when one of them cannot be read is the resync aborted,
// nothing committed (the loop heals, and tries again) rather than delete
// them. An owner with no object to lose (its handler fails, and no object
// of this field manager names it) is reported FAILED. Neither holds the
// other owners back.
func (h *loopHandler[T]) Resync(_ eventloop.Event, state any, _ int, txn eventloop.ResyncOperations) (err error) {
	h.beginTxn(true)
	defer h.abortOnPanic(&err)
	st, _ := state.(kubebridge.State)
	h.owners, h.live = map[string]T{}, map[string]runtime.Object{}
	for key, obj := range st[h.ownerRes] {
		if o, ok := obj.(T); ok {
			h.owners[key] = o
		}
	}
	gone := h.gone
	h.gone = map[string]types.UID{}
	for res := range h.childRes {
		for _, obj := range st[res] {
			if key, err := h.build.key(obj); err == nil {
				if uid, ok := gone[key]; ok && uidOf(obj) == uid {
					h.gone[key] = uid // still being deleted
					continue
				}
				h.live[key] = obj
			}
		}
	}
	for key := range h.updating {
		h.seenVersion(key, h.live[key])
	}
	// Only during the resync: an owner first computed later (created
	// since) has no marker from before to inherit. An aborted resync
	// commits nothing, and TxnDone puts the picture back as it was before
	// it: the next one judges from that (a latch a failed read could not
	// confirm is not "not latched").
	h.before = readBeforeRestart(h.live, h.fieldManager, h.build.ownerGVK.Kind)
	h.before.vouches = h.vouchesFor(txn.Context())
	defer func() { h.before = nil }()
	var errs []string
	order := slices.Sorted(maps.Keys(h.owners))
	for _, key := range order {
		err := h.compute(key)
		if err != nil && h.desired[key] == nil && h.hasObjects(key) {
			if err := h.hold(txn.Context(), key, err); err != nil { // hold logs why it holds
				errs = append(errs, err.Error())
			}
			continue
		}
		h.noteOutcome(key, err)
	}
	h.computeRequirersAgain(order)
	if h.before.err != nil {
		errs = append(errs, fmt.Sprintf("cannot read what vouches for readiness before the restart: %v", h.before.err))
	}
	for key := range h.desired {
		if _, ok := h.owners[key]; !ok {
			h.forget(key)
		}
	}
	if len(errs) > 0 {
		// Abort, not a plain error: the loop commits a resync whose handler
		// failed, and a full resync without these owners' values would
		// delete their objects.
		return eventloop.NewAbortEventError(fmt.Errorf("dependents %s: %s", h.name, strings.Join(errs, "; ")))
	}
	if err := h.recordHeldWithout(txn.Context()); err != nil {
		// Before the commit that takes a marker away: a held object must
		// not vouch for it at the next restart (see heldwithout.go).
		return eventloop.NewAbortEventError(fmt.Errorf("dependents %s: %w", h.name, err))
	}
	for _, key := range slices.Sorted(maps.Keys(h.desired)) {
		for k, v := range h.desired[key].values {
			txn.Put(k, v)
		}
	}
	h.synced = true
	return h.pushLanded(txn)
}

// applyAll is apply for each owner of keys once ("" skipped: an owner
// whose object is stale is both its keeper and refused it), its notes
// joined.
func (h *loopHandler[T]) applyAll(keys []string, txn eventloop.UpdateOperations) (string, error) {
	keys = h.staleFirst(keys)
	var notes []string
	done := map[string]bool{"": true}
	for i := 0; i < len(keys); i++ { // keys grows: the owners refused what an owner freed
		key := keys[i]
		if done[key] {
			continue
		}
		done[key] = true
		note, freed, err := h.apply(key, txn)
		if err != nil {
			return strings.Join(notes, "; "), err
		}
		keys = append(keys, freed...)
		if note != "" {
			notes = append(notes, note)
		}
	}
	return strings.Join(notes, "; "), nil
}

// apply computes the owner at ownerKey again and puts into txn what
// changed of its values (all of them withdrawn when it is gone). It
// returns the owners refused an object it withdrew that was never created
// (see withdraw), to be computed again in the same transaction.
func (h *loopHandler[T]) apply(ownerKey string, txn eventloop.UpdateOperations) (string, []string, error) {
	prev := h.desired[ownerKey]
	if _, ok := h.owners[ownerKey]; !ok {
		h.forget(ownerKey)
		var freed []string
		if prev != nil {
			for k := range prev.values {
				freed = append(freed, h.withdraw(k, txn)...)
			}
		}
		return "withdrew " + ownerKey, freed, nil
	}
	// The keys put before, taken before compute: a failed computation
	// judges the last desired state again in place (prev is cur), and a
	// marker it takes out of it must be withdrawn as well.
	var before []string
	if prev != nil {
		before = slices.Collect(maps.Keys(prev.values))
	}
	err := h.compute(ownerKey)
	cur := h.desired[ownerKey]
	var freed []string
	if prev != nil {
		for _, k := range before {
			if cur == nil || !hasValue(cur, k) {
				// cur is nil with a prev only when prev was a deleted
				// owner's (another UID under the name, see compute) and the
				// new one failed: the deleted owner's values go.
				freed = append(freed, h.withdraw(k, txn)...)
			}
		}
	}
	h.noteOutcome(ownerKey, err)
	if cur == nil {
		return "", freed, nil // failed, and nothing known to keep: reported
	}
	for k, v := range cur.values {
		txn.Put(k, v)
	}
	if err != nil {
		return "kept " + ownerKey + ": " + err.Error(), freed, nil
	}
	note := fmt.Sprintf("%s: %d ready of %d", ownerKey, cur.ready, len(cur.objects))
	if prev == nil || prev.ready != cur.ready || len(prev.objects) != len(cur.objects) {
		h.log.Infof("dependents %s: %s", h.name, note) // the summary: only when it changed
	} else {
		h.log.Debugf("dependents %s: %s", h.name, note)
	}
	return note, freed, nil
}

// statusOnly tells whether change is an update of an object that
// changed only its status (and server-maintained metadata).
func statusOnly(change *kubebridge.KubeStateChange) bool {
	return change.PrevValue != nil && change.NewValue != nil && !kubebridge.GenerationChanged(change.PrevValue, change.NewValue)
}

// hasValue tells whether d puts the value at k.
func hasValue(d *desired, k string) bool {
	_, ok := d.values[k]
	return ok
}
