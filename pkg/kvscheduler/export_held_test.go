package kvscheduler

import (
	"fmt"
	"maps"
	"slices"
)

// CheckHeldSet compares, on every node, the leftovers of the held derived
// set (heldset.go) with the derived keys held with the node that its
// value in the southbound does not derive, found from the derived nodes.
// (Its known-absent keys were compared with removedDerived, the list
// they replaced, until it went.) Call it on the
// scheduler's goroutine (see AfterJob).
func CheckHeldSet(s *Scheduler) error {
	for _, k := range slices.Sorted(maps.Keys(s.g.nodes)) {
		n := s.g.nodes[k]
		var left []string
		for _, h := range n.heldSet() {
			if h.present {
				left = append(left, h.key)
			}
		}
		var kvs []KeyValuePair
		derives := n.exists() && n.d != nil && n.d.DerivedValues != nil
		if derives {
			kvs, _ = callDerived(n.d, n.key, n.sb)
		}
		var oldLeft []string
		for _, d := range n.derived {
			if s.g.heldDerived(n, d) != nil && !(derives && hasKey(kvs, d)) {
				oldLeft = append(oldLeft, d)
			}
		}
		slices.Sort(left)
		if !slices.Equal(left, oldLeft) {
			return fmt.Errorf("%s: held set leftovers %v, held derived keys not derived %v (derived %v)", k, left, oldLeft, n.derived)
		}
	}
	return nil
}
