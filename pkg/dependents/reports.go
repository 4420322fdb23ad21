package dependents

import (
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// reports are what the loop last computed for each owner, for the status
// handler, which runs on the controllers' workers. They are indexed by
// object, so that what the status of one owner costs, and what a change
// of one object's state costs, is proportional to that owner's objects,
// not to every owner's.
type reports struct {
	mu sync.Mutex
	m  map[string]report // owner key -> report
	// byObj indexes m: object key -> the owners whose report names it
	// (among their objects or those left out); more than one only while
	// one of them is refused it.
	byObj map[string]map[string]struct{}
	// changed is told of every owner whose report was set (it enqueues
	// the owner's status); called without mu.
	changed func(ownerKey string)
	// was holds, during a transaction, the report each owner changed in it
	// had before (absent: none), so that one not committed is undone (see
	// undo.go): a condition never tells of a computation the scheduler
	// did not get.
	was map[string]*report
}

func newReports() *reports {
	return &reports{m: map[string]report{}, byObj: map[string]map[string]struct{}{}}
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
	r.save(key)
	r.put(key, report{generation: generation, uid: uid, objects: objs, left: left, leaving: leaving, err: err,
		recordErr: r.m[key].recordErr})
	r.mu.Unlock()
	if r.changed != nil {
		r.changed(key)
	}
}

// setRecordErr sets the refused records of the owner at key's report, and
// tells whether that changed what it says (the message, not the error
// value: an event refused the same way again changes nothing).
func (r *reports) setRecordErr(key string, err error) bool {
	r.mu.Lock()
	rep, ok := r.m[key]
	if !ok || errString(rep.recordErr) == errString(err) {
		r.mu.Unlock()
		return false
	}
	r.save(key)
	rep.recordErr = err
	r.m[key] = rep
	r.mu.Unlock()
	if r.changed != nil {
		r.changed(key)
	}
	return true
}

// errString is err's message, "" for nil.
func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// put sets the report of the owner at key and indexes it; with mu held.
func (r *reports) put(key string, rep report) {
	r.unindex(key)
	r.m[key] = rep
	for _, l := range [][]objState{rep.objects, rep.left, rep.leaving} {
		for _, o := range l {
			if r.byObj[o.key] == nil {
				r.byObj[o.key] = map[string]struct{}{}
			}
			r.byObj[o.key][key] = struct{}{}
		}
	}
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

func (r *reports) drop(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.save(key)
	r.unindex(key)
	delete(r.m, key)
}

// save records the report of the owner at key before the transaction
// first changes it; with mu held.
func (r *reports) save(key string) {
	if r.was == nil {
		return
	}
	if _, ok := r.was[key]; ok {
		return
	}
	var was *report
	if rep, ok := r.m[key]; ok {
		was = &rep
	}
	r.was[key] = was
}

// begin starts recording a transaction's changes.
func (r *reports) begin() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.was = map[string]*report{}
}

// commit keeps the transaction's changes.
func (r *reports) commit() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.was = nil
}

// rollback undoes the transaction's changes, and tells changed of each
// owner whose report it put back.
func (r *reports) rollback() {
	r.mu.Lock()
	was := r.was
	r.was = nil
	for key, rep := range was {
		if rep == nil {
			r.unindex(key)
			delete(r.m, key)
		} else {
			r.put(key, *rep)
		}
	}
	r.mu.Unlock()
	if r.changed != nil {
		for key := range was {
			r.changed(key)
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
