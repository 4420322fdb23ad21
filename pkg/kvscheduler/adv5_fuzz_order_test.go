package kvscheduler_test

import (
	"maps"
	"slices"
	"strings"

	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// What the adv5 fuzz's delete-order check (fzCheckDeleteOrder, -fzorder)
// does not count as a wrong order.

// fzInjectedIn tells whether a failure injected in an earlier step fired
// in ops (FailNext waits for its operation): the step is one with an
// injected failure too.
func fzInjectedIn(ops []kvtest.Op) bool {
	for _, o := range ops {
		if o.Err != nil && strings.HasPrefix(o.Err.Error(), "injected") {
			return true
		}
	}
	return false
}

// fzReaches tells whether the value held at from needs the one at to,
// directly or through other held values: their dependencies (an any-of one
// through every held key it names) and, for a derived value d/N, the base
// b/M whose held value derives it (a base never goes before what it
// derives); a dependency on d/N or p/N (a property, never in the
// southbound), held or gone already, reaches that base too (adv5 fuzz
// seeds 115269 and 120431: a/1 = w|p/1 and b/1 = v@1@2|~a/1 are a
// cycle). A value that reaches the one it is deleted before is in a
// cycle with it: members of a cycle go together. A key in unseen (drift
// the scheduler has not read) counts by the value held before the drift
// too, which is all the scheduler may know (adv5 fuzz seed 6245: a/1 =
// v|b/2, in a cycle with b/2 = w|a/1, drifted to v|).
func fzReaches(held, unseen map[string]any, from, to string) bool {
	known := func(k string) []any {
		var out []any
		if v, ok := held[k]; ok {
			out = append(out, v)
		}
		if v := unseen[k]; v != nil {
			out = append(out, v)
		}
		return out
	}
	keys := slices.Collect(maps.Keys(held))
	for k, v := range unseen {
		if _, ok := held[k]; !ok && v != nil {
			keys = append(keys, k)
		}
	}
	seen := map[string]bool{from: true}
	stack := []string{from}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		var next []string
		// derives tells whether the held value of k, a base, derives
		// d/n and p/n (any n when n is empty).
		derives := func(k, n string) bool {
			for _, v := range known(k) {
				tag, _ := fzParse(v)
				if parts := strings.Split(tag, "@")[1:]; strings.HasPrefix(k, "b/") && (slices.Contains(parts, n) || n == "" && len(parts) > 0) {
					return true
				}
			}
			return false
		}
		for _, xv := range known(x) {
			_, deps := fzParse(xv)
			for _, d := range deps {
				name := d.Key
				if name == "" {
					name = d.AnyOf.KeyPrefixes[0]
				}
				for _, k := range keys {
					if d.Key == k || d.Key == "" && strings.HasPrefix(k, name) {
						next = append(next, k)
					}
					// A derived value or property, held or gone
					// already, needs its base.
					if _, n, ok := strings.Cut(name, "/"); ok && (strings.HasPrefix(name, "d/") || strings.HasPrefix(name, "p/")) && derives(k, n) {
						next = append(next, k)
					}
				}
			}
		}
		if n, ok := strings.CutPrefix(x, "d/"); ok {
			for _, k := range keys {
				if derives(k, n) {
					next = append(next, k)
				}
			}
		}
		for _, k := range next {
			if k == to {
				return true
			}
			if !seen[k] {
				seen[k] = true
				stack = append(stack, k)
			}
		}
	}
	return false
}
