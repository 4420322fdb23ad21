package kvscheduler_test

import "math/rand/v2"

// extendOrdering makes, from r, some dependencies of half the scenarios
// ordering only (kvscheduler.OrderingOnly, "~" in front; see ordering for
// the model's rules): a third of the dependencies of every value such a
// scenario requests, of every class (exact keys, derived values,
// properties, any-of, the southbound's own values). The other half of the
// scenarios stay as they were drawn before ordering-only dependencies
// were.
func extendOrdering(r *rand.Rand, sc *scenario) {
	if r.IntN(2) == 0 {
		return
	}
	for i := range sc.Txns {
		for _, s := range sc.Txns[i].Set {
			if s.Val == nil {
				continue
			}
			for j, d := range s.Val.Deps {
				if r.IntN(3) == 0 {
					s.Val.Deps[j] = "~" + d
				}
			}
		}
	}
}
