package kvscheduler_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// This file holds the checks of TestRandomGraphs (random_test.go): rule 2
// inside the wrapped descriptor callbacks, rule 3 after every transaction.

// harness holds the model and watches the descriptor calls.
type harness struct {
	sb *kvtest.Southbound

	mu      sync.Mutex
	desired map[string]rval
	// failed are the keys whose last operation was a failed delete or
	// update ("delete", "update"): the value left in the southbound waits
	// for its retry.
	failed map[string]string
	// lost are the values the southbound lost behind the scheduler's
	// back and the scheduler did not read back since (see lose).
	lost map[string]any
	// owned are the southbound's own values ("s/" keys), notified.
	owned map[string]any
	// orderedAfter maps a value whose delete the transaction still has to
	// do to a value it is ordered after that the transaction deleted
	// already: deleting it now breaks "deletes before" (see checkDelete).
	orderedAfter map[string]string
	step         string
	violation    *propFailure
}

func (h *harness) violate(kind, format string, args ...any) {
	if h.violation == nil && !ignored(kind) {
		h.violation = &propFailure{kind: kind, msg: fmt.Sprintf(format, args...), step: h.step}
	}
}

func sbBases(sb map[string]any) map[string]rval {
	out := map[string]rval{}
	for k, v := range sb {
		if rv, ok := v.(rval); ok {
			out[k] = rv
		}
	}
	return out
}

// checkWrite checks rule 2 for a Create or Update of k to v.
func (h *harness) checkWrite(op, k string, v any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	cur := h.sb.Values()
	have := h.believed(cur)
	if b := baseOf(k); b != "" {
		if !have[b] {
			kind := "order-derived"
			if newDepGraph(h.desired, sbBases(cur), sbBases(h.lost)).scc(k)[b] {
				kind += "/cycle" // a cycle through the derived value
			}
			h.violate(kind, "%s of derived %s while its base %s is not in the southbound (southbound %v)", op, k, b, sortedKeys(cur))
		}
		return
	}
	rv := v.(rval)
	if op == "create" {
		for y, x := range h.orderedAfter {
			if x == k {
				delete(h.orderedAfter, y) // what it is ordered after is back
			}
		}
	} else {
		delete(h.orderedAfter, k)
	}
	// An update, and the create of a re-create (after the delete of the
	// value it changes), change a value that exists: its ordering-only
	// dependencies need not be met.
	changes := op == "update" || h.recreating(k, rv)
	var scc map[string]bool
	for _, d := range rv.Deps {
		if depMet(d, have) || changes && ordering(d) {
			continue
		}
		if scc == nil {
			scc = newDepGraph(h.desired, sbBases(cur), sbBases(h.lost), map[string]rval{k: rv}).scc(k)
		}
		if depMet(d, scc) {
			continue
		}
		h.violate("order-"+op+"/"+depClass(d), "%s %s %s while its dependency %s is not in the southbound (southbound %v)", op, k, formatVal(rv), d, sortedKeys(cur))
		return
	}
}

// recreating tells whether a create of k to v is the create of a
// re-create: the transaction deleted another value of k. (A value the
// cascade took down and the transaction then requested with another value
// passes too: the check is weaker than the rule there.)
func (h *harness) recreating(k string, v rval) bool {
	for _, op := range h.sb.Ops(false) {
		if op.Operation == "delete" && op.Key == k && !reflect.DeepEqual(op.Value, v) {
			return true
		}
	}
	return false
}

// checkDelete checks rule 2 for a Delete of k. It returns the values
// ordered after k whose delete the transaction still has to do: once k is
// gone, deleting them breaks "deletes before" (an NB transaction's walk
// deletes them first; a retry's is not ordered so).
func (h *harness) checkDelete(k string) (orderedAfterK []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if x := h.orderedAfter[k]; x != "" {
		h.violate("order-delete/ordering", "delete %s after %s, which it is ordered after, in the same transaction (southbound %v)", k, x, sortedKeys(h.sb.Values()))
		return nil
	}
	retry := strings.HasPrefix(h.step, "retry")
	cur := h.sb.Values()
	// What the scheduler may believe: a value lost behind its back still
	// satisfies a dependency as far as it knows.
	have := h.believed(cur)
	after := h.believed(cur)
	delete(after, k)
	if rv, ok := cur[k].(rval); ok {
		for _, kv := range rv.derived(k) {
			delete(after, kv.Key)
		}
	}
	var scc map[string]bool
	// The derived values of k as stored: a value k no longer derives (its
	// delete failed when k changed) is left over and does not need k.
	derivedOfK := map[string]bool{}
	if rv, ok := cur[k].(rval); ok {
		for _, kv := range rv.derived(k) {
			derivedOfK[kv.Key] = true
		}
	}
	for _, y := range sortedKeys(cur) {
		if y == k {
			continue
		}
		if derivedOfK[y] {
			h.violate("order-delete-base", "delete %s while its derived value %s is in the southbound", k, y)
			return nil
		}
		rv, ok := cur[y].(rval)
		if !ok {
			continue
		}
		for _, d := range rv.Deps {
			if !depMet(d, have) || depMet(d, after) {
				continue
			}
			if scc == nil {
				scc = newDepGraph(h.desired, sbBases(cur), sbBases(h.lost)).scc(k)
			}
			if scc[y] {
				continue
			}
			if ordering(d) {
				// y stays, unless the transaction deletes it: nothing
				// wants it, and it is neither a failed delete's retry nor
				// kept by a failed value that needs it (its delete then
				// waits for that value, which holds back nothing else).
				if _, wanted := h.desired[y]; !wanted && !retry && h.failed[y] == "" && !h.keptByFailure(cur, y) {
					orderedAfterK = append(orderedAfterK, y)
				}
				continue
			}
			h.violate("order-delete/"+depClass(d), "delete %s while %s %s in the southbound depends on it (%s) (southbound %v)", k, y, formatVal(rv), d, sortedKeys(cur))
			return nil
		}
	}
	return orderedAfterK
}

// keptByFailure tells whether y is in the southbound only for a value a
// failed operation left there (see keptAfterTxn).
func (h *harness) keptByFailure(cur map[string]any, y string) bool {
	have := present(cur)
	return h.keptAfterTxn(cur, have, h.givenAfterTxn(cur, have))[y]
}

// deleted notes that k, deleted, was what the values in orderedAfterK are
// ordered after (see checkDelete).
func (h *harness) deleted(k string, orderedAfterK []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, y := range orderedAfterK {
		h.orderedAfter[y] = k
	}
}

// noted records the outcome of an operation on k: op ("update",
// "delete") if it failed, "" if it succeeded.
func (h *harness) noted(k string, failedOp string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if failedOp != "" {
		h.failed[k] = failedOp
	} else {
		delete(h.failed, k)
		delete(h.lost, k) // written again
	}
}

// sbHas tells whether the southbound holds k.
func (h *harness) sbHas(k string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, ok := h.sb.Values()[k]
	return ok
}

func failedOp(op string, err error) string {
	if err != nil {
		return op
	}
	return ""
}

// wrap makes d's callbacks check rule 2 before calling the southbound.
func (h *harness) wrap(d *kvscheduler.Descriptor) *kvscheduler.Descriptor {
	create, update, del := d.Create, d.Update, d.Delete
	d.Create = func(ctx context.Context, k string, v any) (any, error) {
		h.checkWrite("create", k, v)
		if b := baseOf(k); b != "" && !h.sbHas(b) {
			// A derived value exists only with its base (what a Retrieve
			// of base values relies on): the southbound refuses one whose
			// base it lost behind the scheduler's back.
			return nil, fmt.Errorf("%s: base %s does not exist", k, b)
		}
		md, err := create(ctx, k, v)
		if err == nil {
			h.noted(k, "")
		}
		return md, err
	}
	if update != nil {
		d.Update = func(ctx context.Context, k string, old, v any, md any) (any, error) {
			h.checkWrite("update", k, v)
			md, err := update(ctx, k, old, v, md)
			h.noted(k, failedOp("update", err))
			return md, err
		}
	}
	d.Delete = func(ctx context.Context, k string, v any, md any) error {
		orderedAfterK := h.checkDelete(k)
		err := del(ctx, k, v, md)
		h.noted(k, failedOp("delete", err))
		if err == nil {
			h.deleted(k, orderedAfterK)
		}
		return err
	}
	return d
}

// checkAfterTxn checks rule 3.
func (h *harness) checkAfterTxn() {
	h.mu.Lock()
	defer h.mu.Unlock()
	cur := h.sb.Values()
	have := present(cur)
	given := h.givenAfterTxn(cur, have)
	want := h.withOwned(fixedPoint(h.desired, true, given))
	keep := h.keptAfterTxn(cur, have, given)
	for _, k := range sortedKeys(cur) {
		if _, ok := want[k]; !ok && !keep[k] {
			h.violate("extra", "%s is in the southbound but neither desired with its dependencies met nor kept by a failed delete (southbound %v, want %v)", k, sortedKeys(cur), sortedKeys(want))
			return
		}
	}
}

// givenAfterTxn lists the values that exist as far as the scheduler
// knows although the desired values alone would not make them: values a
// failed update left (and their derived values), the southbound's own.
func (h *harness) givenAfterTxn(cur map[string]any, have map[string]bool) map[string]bool {
	// A value whose update failed is in the southbound as it was, derived
	// values and properties with it, and it still satisfies dependencies
	// (unlike one whose delete failed): desired values that depend on it
	// may exist.
	given := map[string]bool{}
	for k, op := range h.failed {
		if _, desired := h.desired[k]; !desired || op != "update" {
			continue
		}
		v, ok := cur[k]
		if !ok {
			// Lost behind the scheduler's back: it is there as far as the
			// scheduler knows until it reads it back, and values that
			// depend on it may be created meanwhile (the order checks
			// count it as present too).
			v = h.lost[k]
		}
		if rv, ok := v.(rval); ok {
			given[k] = true
			for _, kv := range rv.derived(k) {
				_, lost := h.lost[kv.Key]
				given[kv.Key] = have[kv.Key] || lost
			}
		}
	}
	for k := range h.owned {
		given[k] = true
	}
	return given
}

// keptAfterTxn lists the values a transaction may leave in the southbound
// beyond the wanted ones: those left by failed operations, and what they
// (and the values lost behind the scheduler's back) need.
func (h *harness) keptAfterTxn(cur map[string]any, have, given map[string]bool) map[string]bool {
	// Values left by failed operations, and what they (transitively) need.
	keep := map[string]bool{}
	var stack []string
	for k := range h.failed {
		if _, ok := cur[k]; ok {
			keep[k] = true
			stack = append(stack, k)
		}
	}
	for k, in := range given {
		if _, ok := cur[k]; ok && in && !keep[k] {
			keep[k] = true
			stack = append(stack, k)
		}
	}
	// Values lost behind the scheduler's back are there as far as it
	// knows: what they need stays until it reads them back.
	for k := range h.lost {
		stack = append(stack, k)
	}
	for len(stack) > 0 {
		k := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		var next []string
		if b := baseOf(k); b != "" {
			next = append(next, b)
		}
		v, ok := cur[k]
		if !ok {
			v = h.lost[k]
		}
		if rv, ok := v.(rval); ok {
			for _, d := range rv.Deps {
				if ordering(d) {
					continue // keeps nothing from being deleted
				}
				for _, x := range depTargets(d, have) {
					if have[x] {
						next = append(next, x, baseOf(x))
					}
				}
			}
		}
		for _, x := range next {
			if _, ok := cur[x]; ok && !keep[x] {
				keep[x] = true
				stack = append(stack, x)
			}
		}
	}
	return keep
}
