package kvscheduler_test

import (
	"fmt"
	"slices"
	"strings"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// This file holds the model of the random property test (random_test.go):
// the values, their dependencies and derived values, and the expected
// southbound computed independently of the scheduler.
//
// Keys: base values "a/g<G>/<i>" (descriptor "a"); derived values with a
// descriptor "d/g<G>/<i>/<j>" (descriptor "d"); properties (derived values
// without a descriptor, never in the southbound) "p/g<G>/<i>/<j>".

// rval is the value of a base key.
type rval struct {
	Ver int
	// Deps are exact keys, or "any:<prefix>" for an AnyOf dependency;
	// with a "~" in front, ordering only (see ordering).
	Deps []string
	// Derived lists the derived values d/<base>/<j> (handled by "d").
	Derived []int
	// Props lists the properties p/<base>/<j> (no descriptor).
	Props []int
}

func (v rval) deps() []kvscheduler.Dependency {
	var out []kvscheduler.Dependency
	for _, d := range v.Deps {
		kind := kvscheduler.Requires
		if ordering(d) {
			kind = kvscheduler.OrderingOnly
		}
		if p, ok := strings.CutPrefix(depKey(d), "any:"); ok {
			out = append(out, kvscheduler.Dependency{Label: d, AnyOf: kvscheduler.AnyOfDependency{KeyPrefixes: []string{p}}, Kind: kind})
		} else {
			out = append(out, kvscheduler.Dependency{Key: depKey(d), Kind: kind})
		}
	}
	return out
}

// ordering tells whether dependency d is ordering only ("~" in front): the
// model's rules for it, from docs/kvscheduler.md ("Two kinds of
// dependency"): a value waits for it to be created (creates after); once
// the value exists, it stays, is updated in place (or re-created) without
// it, and does not keep it from being deleted; and when both are deleted
// in one transaction, the value goes first (deletes before).
func ordering(d string) bool { return strings.HasPrefix(d, "~") }

// depKey is d without its ordering mark: "key" or "any:prefix".
func depKey(d string) string { return strings.TrimPrefix(d, "~") }

// derived returns the derived values and properties of base key k.
func (v rval) derived(k string) []kvscheduler.KeyValuePair {
	suffix := strings.TrimPrefix(k, "a/")
	var out []kvscheduler.KeyValuePair
	for _, j := range v.Derived {
		content := fmt.Sprintf("%s#%d", k, j)
		if j%2 == 0 { // even derived values follow the base's version
			content += fmt.Sprintf("@v%d", v.Ver)
		}
		out = append(out, kvscheduler.KeyValuePair{Key: fmt.Sprintf("d/%s/%d", suffix, j), Value: content})
	}
	for _, j := range v.Props {
		out = append(out, kvscheduler.KeyValuePair{Key: fmt.Sprintf("p/%s/%d", suffix, j), Value: fmt.Sprintf("%s%%%d@v%d", k, j, v.Ver)})
	}
	return out
}

// baseOf returns the base key of a derived value or property, or "".
func baseOf(k string) string {
	if !strings.HasPrefix(k, "d/") && !strings.HasPrefix(k, "p/") {
		return ""
	}
	i := strings.LastIndexByte(k, '/')
	return "a/" + k[2:i]
}

// depMet tells whether dependency d ("key" or "any:prefix") is satisfied
// by one of the keys in have.
func depMet(d string, have map[string]bool) bool {
	d = depKey(d)
	if p, ok := strings.CutPrefix(d, "any:"); ok {
		for k, in := range have {
			if in && strings.HasPrefix(k, p) {
				return true
			}
		}
		return false
	}
	return have[d]
}

// depTargets returns the keys among nodes that can satisfy d.
func depTargets(d string, nodes map[string]bool) []string {
	d = depKey(d)
	if p, ok := strings.CutPrefix(d, "any:"); ok {
		var out []string
		for k := range nodes {
			if strings.HasPrefix(k, p) {
				out = append(out, k)
			}
		}
		return out
	}
	return []string{d}
}

// wantSouthbound computes what the southbound must hold once retries settled,
// with the reference's rule that a value's derived values exist only after
// it: a base value exists iff every dependency is met by an existing key,
// where its cycle's members count (a cycle whose external dependencies are
// met exists as a whole) but derived values and properties count only once
// their base exists on its own. So it is computed in rounds: each round
// takes the greatest fixed point over the desired values, with the derived
// values of the bases of the previous round, until the bases stop growing.
// A cycle through a derived value (a depends on d/b/0, b depends on a) is
// therefore not created from nothing, as in the reference; it can come to
// exist step by step (b and d/b/0 exist, then a is changed to depend on
// d/b/0), and such values are in mostSouthbound, which counts derived
// values in cycles too. Properties are left out of the result: they are
// not in the southbound. Ordering-only dependencies count as the others:
// what must exist is what could be created.
func wantSouthbound(desired map[string]rval, owned map[string]bool) map[string]any {
	return fixedPoint(desired, false, owned)
}

// mostSouthbound is the most the southbound may hold: the greatest fixed
// point in which derived values count for cycles too. (owned are the
// southbound's own values, which exist whatever the northbound wants.)
// Ordering-only dependencies do not count: a value created once they were
// met stays when they go.
func mostSouthbound(desired map[string]rval, owned map[string]bool) map[string]any {
	return fixedPoint(desired, true, owned)
}

// fixedPoint computes the values that exist given the desired ones (see
// wantSouthbound); the keys in given exist whatever their dependencies
// (values left in the southbound by a failed update) and satisfy those of
// others. viaDerived is the most (see mostSouthbound), which also leaves
// out ordering-only dependencies.
func fixedPoint(desired map[string]rval, viaDerived bool, given map[string]bool) map[string]any {
	var alive map[string]bool
	established := map[string]bool{}
	for {
		alive = map[string]bool{}
		for k := range desired {
			alive[k] = true
		}
		for k, in := range given {
			alive[k] = alive[k] || in
		}
		for k, v := range desired {
			if established[k] || viaDerived {
				for _, kv := range v.derived(k) {
					alive[kv.Key] = true
				}
			}
		}
		for changed := true; changed; {
			changed = false
			for k, v := range desired {
				if !alive[k] || given[k] {
					continue
				}
				for _, d := range v.Deps {
					if viaDerived && ordering(d) {
						continue
					}
					if !depMet(d, alive) {
						alive[k] = false
						for _, kv := range v.derived(k) {
							alive[kv.Key] = alive[kv.Key] && !viaDerived || given[kv.Key]
						}
						changed = true
						break
					}
				}
			}
		}
		grew := false
		for k := range desired {
			if alive[k] && !established[k] {
				established[k], grew = true, true
			}
		}
		if !grew || viaDerived {
			break
		}
	}
	out := map[string]any{}
	for k, v := range desired {
		if !alive[k] {
			continue
		}
		out[k] = v
		for _, kv := range v.derived(k) {
			if strings.HasPrefix(kv.Key, "d/") {
				out[kv.Key] = kv.Value
			}
		}
	}
	return out
}

// present returns the keys that exist given the southbound content: its
// keys plus the properties of the base values it holds.
func present(sb map[string]any) map[string]bool {
	out := make(map[string]bool, len(sb))
	for k, v := range sb {
		out[k] = true
		if rv, ok := v.(rval); ok {
			for _, kv := range rv.derived(k) {
				// Derived values with a descriptor are in the southbound
				// on their own (or not, when their delete or create ran
				// separately from their base's).
				if strings.HasPrefix(kv.Key, "p/") {
					out[kv.Key] = true
				}
			}
		}
	}
	return out
}

// depGraph is the dependency graph used for the cycle exemption: an edge
// from every base value to every key that can satisfy one of its
// dependencies, and from every derived value or property to its base.
type depGraph struct {
	nodes map[string]bool
	out   map[string][]string
}

// newDepGraph builds the graph over the union of the given base values
// (the desired ones, those in the southbound, the one being written): a
// value is exempted only from dependencies it could be in a cycle with.
func newDepGraph(vals ...map[string]rval) *depGraph {
	g := &depGraph{nodes: map[string]bool{}, out: map[string][]string{}}
	for _, m := range vals {
		for k, v := range m {
			g.nodes[k] = true
			for _, kv := range v.derived(k) {
				g.nodes[kv.Key] = true
				g.out[kv.Key] = append(g.out[kv.Key], k)
			}
		}
	}
	for _, m := range vals {
		for _, v := range m {
			for _, d := range v.Deps {
				if d = depKey(d); !strings.HasPrefix(d, "any:") {
					g.nodes[d] = true
				}
			}
		}
	}
	for _, m := range vals {
		for k, v := range m {
			for _, d := range v.Deps {
				g.out[k] = append(g.out[k], depTargets(d, g.nodes)...)
			}
		}
	}
	return g
}

// scc returns the strongly connected component of k.
func (g *depGraph) scc(k string) map[string]bool {
	fwd := reach(k, g.out)
	in := map[string][]string{}
	for a, bs := range g.out {
		for _, b := range bs {
			in[b] = append(in[b], a)
		}
	}
	bwd := reach(k, in)
	out := map[string]bool{}
	for x := range fwd {
		if bwd[x] {
			out[x] = true
		}
	}
	return out
}

func reach(k string, edges map[string][]string) map[string]bool {
	seen := map[string]bool{k: true}
	stack := []string{k}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, y := range edges[x] {
			if !seen[y] {
				seen[y] = true
				stack = append(stack, y)
			}
		}
	}
	return seen
}

// formatScenario prints sc as a Go literal to paste into a unit test:
//
//	checkScenario(t, scenario{...})
func formatScenario(sc scenario) string {
	var b strings.Builder
	fmt.Fprintf(&b, "checkScenario(t, scenario{NoUpdate: %v, NoDerivedRetrieve: %v, ClaimDerived: %v, RetrieveDerived: %v, Txns: []rtxn{\n",
		sc.NoUpdate, sc.NoDerivedRetrieve, sc.ClaimDerived, sc.RetrieveDerived)
	for i, tx := range sc.Txns {
		fmt.Fprintf(&b, "\t{ // %d\n", i)
		if tx.Resync != kvscheduler.NoResync {
			fmt.Fprintf(&b, "\t\tResync: kvscheduler.%sResync,\n", tx.Resync)
		}
		if len(tx.Keys) > 0 {
			fmt.Fprintf(&b, "\t\tKeys: %#v,\n", tx.Keys)
		}
		if len(tx.Lose) > 0 {
			fmt.Fprintf(&b, "\t\tLose: %#v,\n", tx.Lose)
		}
		if len(tx.Notify) > 0 {
			b.WriteString("\t\tNotify: []rnotify{")
			for i, n := range tx.Notify {
				if i > 0 {
					b.WriteString(", ")
				}
				fmt.Fprintf(&b, "{%q, %v}", n.Key, n.Up)
			}
			b.WriteString("},\n")
		}
		if len(tx.Fail) > 0 {
			b.WriteString("\t\tFail: []rfail{")
			for i, f := range tx.Fail {
				if i > 0 {
					b.WriteString(", ")
				}
				fmt.Fprintf(&b, "{%q, %q}", f.Op, f.Key)
			}
			b.WriteString("},\n")
		}
		if len(tx.Set) > 0 {
			b.WriteString("\t\tSet: []rset{\n")
			for _, s := range tx.Set {
				if s.Val == nil {
					fmt.Fprintf(&b, "\t\t\t{%q, nil},\n", s.Key)
					continue
				}
				fmt.Fprintf(&b, "\t\t\t{%q, &%s},\n", s.Key, formatVal(*s.Val))
			}
			b.WriteString("\t\t},\n")
		}
		b.WriteString("\t},\n")
	}
	b.WriteString("}})")
	return b.String()
}

func formatVal(v rval) string {
	parts := []string{fmt.Sprintf("Ver: %d", v.Ver)}
	if len(v.Deps) > 0 {
		parts = append(parts, fmt.Sprintf("Deps: %#v", v.Deps))
	}
	if len(v.Derived) > 0 {
		parts = append(parts, fmt.Sprintf("Derived: %#v", v.Derived))
	}
	if len(v.Props) > 0 {
		parts = append(parts, fmt.Sprintf("Props: %#v", v.Props))
	}
	return "rval{" + strings.Join(parts, ", ") + "}"
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
