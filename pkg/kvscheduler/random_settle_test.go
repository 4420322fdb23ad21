package kvscheduler_test

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"strings"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// The checks of TestRandomGraphs after a transaction's error (rule 4) and
// once the retries settled (rule 1).

// checkSettled checks rule 1 once the retries settled.
func (r *runner) checkSettled() *propFailure {
	h, sb := r.h, r.sb
	h.mu.Lock()
	defer h.mu.Unlock()
	h.step = "settled"
	got, least, most := sb.Values(), h.withOwned(wantSouthbound(h.desired, h.ownedKeys())), h.withOwned(mostSouthbound(h.desired, h.ownedKeys()))
	// Between the least and the most (cycles through derived values exist
	// or not, depending on the order they came in), and consistent.
	want := maps.Clone(least)
	for k := range got {
		if v, ok := most[k]; ok {
			want[k] = v
		}
	}
	if !reflect.DeepEqual(got, want) {
		if kind := settledClass(got, want, h.desired); !ignored(kind) {
			return &propFailure{kind: kind, step: h.step, msg: diffSB(got, want)}
		}
	}
	have := present(got)
	for _, k := range sortedKeys(got) {
		if v, ok := got[k].(rval); ok {
			for _, d := range v.Deps {
				if !ordering(d) && !depMet(d, have) && !ignored("settled/unmet") {
					return &propFailure{kind: "settled/unmet", step: h.step, msg: fmt.Sprintf("%s is in the southbound without its dependency %s", k, d)}
				}
			}
		}
	}
	return nil
}

// spuriousFailure checks rule 4 on the error te of a transaction, given
// the southbound before (before) and after it (after) and the values
// failed before it. A delete the scheduler refused for a dependent that
// still existed, and that went through in the same transaction once the
// dependent was gone, did not fail: reporting it is a transaction failed
// for nothing (the order of the walk, not the southbound). After an
// injected failure in the transaction, or when the dependent named had
// failed before it, such a refusal may follow from that failure (the
// dependent's delete failed first), and is left alone; so is one whose
// dependent was refused in turn. A value the southbound lost before the
// transaction was not deleted by it (seed 98804).
func spuriousFailure(te *kvscheduler.TransactionError, before, after map[string]any, failedBefore map[string]bool) *propFailure {
	if te == nil {
		return nil
	}
	for _, ke := range te.Failed {
		if errors.Is(ke.Err, errInjected) {
			return nil
		}
	}
	// A refusal whose dependent was refused itself in the transaction is
	// a link of such a chain too.
	refused := map[string]bool{}
	for _, ke := range te.Failed {
		refused[ke.Key] = true
	}
	for _, ke := range te.Failed {
		blocker, _, _ := strings.Cut(strings.TrimPrefix(ke.Err.Error(), "kvscheduler: not deleted: "), ",")
		_, there := after[ke.Key]
		if _, was := before[ke.Key]; was && !there && ke.Operation == kvscheduler.OpDelete &&
			strings.Contains(ke.Err.Error(), "still exists") && !failedBefore[blocker] && !refused[blocker] {
			return &propFailure{kind: "spurious-failure",
				msg: fmt.Sprintf("%s reported failed (%v), but deleted by the same transaction", ke.Key, ke.Err)}
		}
	}
	return nil
}

// settledClass classifies a wrong settled state: an extra value, a missing
// value that depends on itself (an AnyOf matching its own key, or its own
// key), another missing value, or a wrong content.
func settledClass(got, want map[string]any, desired map[string]rval) string {
	for _, k := range sortedKeys(got) {
		if _, ok := want[k]; !ok {
			return "settled/extra"
		}
	}
	class := "settled/value"
	for _, k := range sortedKeys(want) {
		if _, ok := got[k]; ok {
			continue
		}
		class = "settled/missing"
		for _, d := range desired[k].Deps {
			if depMet(d, map[string]bool{k: true}) {
				return "settled/missing-self"
			}
		}
	}
	return class
}

func diffSB(got, want map[string]any) string {
	var parts []string
	for _, k := range sortedKeys(got) {
		if w, ok := want[k]; !ok {
			parts = append(parts, fmt.Sprintf("extra %s", k))
		} else if !reflect.DeepEqual(got[k], w) {
			parts = append(parts, fmt.Sprintf("%s is %v, want %v", k, fmtAny(got[k]), fmtAny(w)))
		}
	}
	for _, k := range sortedKeys(want) {
		if _, ok := got[k]; !ok {
			parts = append(parts, fmt.Sprintf("missing %s", k))
		}
	}
	return "southbound differs from the expected: " + strings.Join(parts, "; ")
}

func fmtAny(v any) string {
	if rv, ok := v.(rval); ok {
		return formatVal(rv)
	}
	return fmt.Sprint(v)
}
