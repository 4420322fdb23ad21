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

// CheckHeldUnknown checks the held tri-state's unknown values: the nodes
// marked unknown (heldUnknown) are the ones listed to be read
// (unknownNodes), which replaced Scheduler.unknown, a set of keys, once
// the two were shown equal. Call it on the scheduler's goroutine (see
// AfterJob).
func CheckHeldUnknown(s *Scheduler) error {
	listed := map[*node]bool{}
	for _, n := range s.unknownNodes {
		if !n.heldUnknown() {
			return fmt.Errorf("%s: listed unknown, not marked", n.key)
		}
		listed[n] = true
	}
	for _, k := range slices.Sorted(maps.Keys(s.g.nodes)) {
		if n := s.g.nodes[k]; n.heldUnknown() && !listed[n] {
			return fmt.Errorf("%s: marked unknown, not listed", k)
		}
	}
	return nil
}

// HeldUnknownCount returns the number of nodes whose held value is
// unknown. Call it on the scheduler's goroutine (see AfterJob).
func HeldUnknownCount(s *Scheduler) int {
	c := 0
	for _, n := range s.g.nodes {
		if n.heldUnknown() {
			c++
		}
	}
	return c
}
