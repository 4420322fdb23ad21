package dependents

import (
	"maps"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// reports are what the loop last computed for each owner, for the status
// handler, which runs on the controllers' workers. They are indexed by
// object, so that what the status of one owner costs, and what a change
// of one object's state costs, is proportional to that owner's objects,
// not to every owner's. Readers see only what committed transactions
// computed: during a transaction (begin) the reports it sets are pending,
// seen by no reader and told to no one, until commit; rollback drops them
// (see undo.go). A condition never tells of a computation the scheduler
// did not get, not even for a moment.
type reports struct {
	mu sync.Mutex
	m  map[string]report // owner key -> report
	// byObj indexes m: object key -> the owners whose report names it
	// (among their objects or those left out); more than one only while
	// one of them is refused it.
	byObj map[string]map[string]struct{}
	// recordErrs indexes m too: the owners whose report carries refused
	// records, so that clearing them costs what they are, not a visit of
	// every owner per event.
	recordErrs map[string]struct{}
	// changed is told of every owner whose report was set (it enqueues
	// the owner's status); called without mu.
	changed func(ownerKey string)
	// pending holds, during a transaction, the reports it set (nil: the
	// owner's dropped); nil outside a transaction.
	pending map[string]*report
}

func newReports() *reports {
	return &reports{m: map[string]report{}, byObj: map[string]map[string]struct{}{}, recordErrs: map[string]struct{}{}}
}

// report is one owner's objects as the loop last judged them.
type report struct {
	generation int64     // the owner's generation the loop computed
	uid        types.UID // the owner's UID: an owner created again under its name is another owner
	objects    []objState
	left       []objState // left out by IncludeWhen
	leaving    []objState // no longer wanted, still in the scheduler (leaving.go)
	err        error
	recordErr  error // held-without records refused for good (see recordrefused.go)
}

func (r *reports) set(key string, uid types.UID, generation int64, d *desired, err error) {
	var objs, left, leaving []objState
	if d != nil {
		objs, left, leaving = slices.Clone(d.objects), slices.Clone(d.left), slices.Clone(d.leaving)
	}
	r.mu.Lock()
	cur, _ := r.latest(key)
	rep := report{generation: generation, uid: uid, objects: objs, left: left, leaving: leaving, err: err, recordErr: cur.recordErr}
	r.stage(key, &rep)
}

// setRecordErr sets the refused records of the owner at key's report, and
// tells whether that changed what it says (the message, not the error
// value: an event refused the same way again changes nothing).
func (r *reports) setRecordErr(key string, err error) bool {
	r.mu.Lock()
	rep, ok := r.latest(key)
	if !ok || errString(rep.recordErr) == errString(err) {
		r.mu.Unlock()
		return false
	}
	rep.recordErr = err
	r.stage(key, &rep)
	return true
}

// errString is err's message, "" for nil.
func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// withRecordErr returns the owners whose latest report (see latest) may
// carry refused records: those committed with some, and those the
// transaction under way set with some.
func (r *reports) withRecordErr() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	keys := slices.Collect(maps.Keys(r.recordErrs))
	for key, p := range r.pending {
		if p != nil && p.recordErr != nil {
			keys = append(keys, key)
		}
	}
	return keys
}

func (r *reports) drop(key string) {
	r.mu.Lock()
	r.stage(key, nil)
}

// latest returns the report of the owner at key as the transaction under
// way set it, or as committed; with mu held.
func (r *reports) latest(key string) (report, bool) {
	if p, ok := r.pending[key]; ok {
		if p == nil {
			return report{}, false
		}
		return *p, true
	}
	rep, ok := r.m[key]
	return rep, ok
}

// stage sets (rep nil: drops) the report of the owner at key: pending
// during a transaction, else at once, telling changed. Called with mu
// held; it unlocks it.
func (r *reports) stage(key string, rep *report) {
	if r.pending != nil {
		r.pending[key] = rep
		r.mu.Unlock()
		return
	}
	r.apply(key, rep)
	r.mu.Unlock()
	if r.changed != nil {
		r.changed(key)
	}
}

// apply sets (rep nil: drops) the report of the owner at key for readers,
// indexed; with mu held.
func (r *reports) apply(key string, rep *report) {
	r.unindex(key)
	delete(r.recordErrs, key)
	if rep == nil {
		delete(r.m, key)
		return
	}
	r.m[key] = *rep
	if rep.recordErr != nil {
		r.recordErrs[key] = struct{}{}
	}
	for _, l := range [][]objState{rep.objects, rep.left, rep.leaving} {
		for _, o := range l {
			if r.byObj[o.key] == nil {
				r.byObj[o.key] = map[string]struct{}{}
			}
			r.byObj[o.key][key] = struct{}{}
		}
	}
}

// begin starts a transaction: what it sets is pending until commit.
func (r *reports) begin() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pending = map[string]*report{}
}

// commit makes the transaction's reports the readers', and tells changed
// of each owner.
func (r *reports) commit() {
	r.mu.Lock()
	pending := r.pending
	r.pending = nil
	for key, rep := range pending {
		r.apply(key, rep)
	}
	r.mu.Unlock()
	if r.changed != nil {
		for _, key := range slices.Sorted(maps.Keys(pending)) {
			r.changed(key)
		}
	}
}

// rollback drops the transaction's reports: readers never saw them.
func (r *reports) rollback() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pending = nil
}

// unindex takes the objects of the owner at key out of byObj; with mu held.
func (r *reports) unindex(key string) {
	old, ok := r.m[key]
	if !ok {
		return
	}
	for _, l := range [][]objState{old.objects, old.left, old.leaving} {
		for _, o := range l {
			if owners := r.byObj[o.key]; owners != nil {
				delete(owners, key)
				if len(owners) == 0 {
					delete(r.byObj, o.key)
				}
			}
		}
	}
}

func (r *reports) get(key string) (report, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rep, ok := r.m[key]
	return rep, ok
}

// find returns the owner and the state of the object at objKey: of the
// owner that keeps it if one does (among its objects, not refused it),
// else of one refused it, else of one it is leaving (no longer wanted,
// see leaving.go), else of one that leaves it out (left); ties go
// to the first owner key, so that the answer does not depend on map order.
func (r *reports) find(objKey string) (owner string, st objState, left, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rank := 0 // 4: kept, 3: refused, 2: leaving, 1: left out
	for o := range r.byObj[objKey] {
		rep := r.m[o]
		s, rk := objState{}, 0
		if i := slices.IndexFunc(rep.objects, func(s objState) bool { return s.key == objKey }); i >= 0 {
			s, rk = rep.objects[i], 3
			if s.contested == "" {
				rk = 4
			}
		} else if i := slices.IndexFunc(rep.leaving, func(s objState) bool { return s.key == objKey }); i >= 0 {
			s, rk = rep.leaving[i], 2
		} else if i := slices.IndexFunc(rep.left, func(s objState) bool { return s.key == objKey }); i >= 0 {
			s, rk = rep.left[i], 1
		}
		if rk > rank || rk == rank && rk > 0 && o < owner {
			owner, st, rank = o, s, rk
		}
	}
	return owner, st, rank == 1, rank > 0
}

// stateOf returns the state of the object at objKey as the owner at
// ownerKey last judged it (among its objects or those it leaves out).
func (r *reports) stateOf(ownerKey, objKey string) (objState, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rep := r.m[ownerKey]
	for _, l := range [][]objState{rep.objects, rep.left} {
		if i := slices.IndexFunc(l, func(s objState) bool { return s.key == objKey }); i >= 0 {
			return l[i], true
		}
	}
	return objState{}, false
}

// ownerOf returns the owner of the object at objKey (not an owner that
// only leaves it out).
func (r *reports) ownerOf(objKey string) (string, bool) {
	owner, _, left, ok := r.find(objKey)
	if !ok || left {
		return "", false
	}
	return owner, true
}
