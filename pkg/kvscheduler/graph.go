package kvscheduler

import (
	"fmt"
	"slices"
	"strings"
)

// baseKey is the key whose request governs the value: its base for a
// derived value, itself otherwise.
func (g *graph) baseKey(n *node) string {
	for i := 0; n.base != "" && i < 64; i++ {
		b := g.nodes[n.base]
		if b == nil {
			return n.base
		}
		n = b
	}
	return n.key
}

// graph holds the nodes and the indexes that find, for a value, what
// satisfies its dependencies and, for a provider, who depends on it,
// without scanning the graph.
type graph struct {
	nodes map[string]*node
	// exact maps a key that has no node to the nodes with a dependency on
	// exactly that key (a slice: a key has few dependents, and a map per
	// key costs more). A key's list moves to its node (node.dependents)
	// while it has one: the list is read, and added to, for every value
	// created, and a lookup in a map of a large graph costs cache misses.
	exact map[string][]*node
	// prefixes holds, per key prefix used by any-of dependencies, the
	// nodes depending on it and the nodes whose keys have it.
	prefixes map[string]*prefixEntry
	// selectors are the nodes with any-of dependencies given by selector
	// functions: a value's dependents are found by asking each of them.
	selectors map[*node]struct{}
	// matched are the selector dependencies indexed (see selectorMatches).
	matched map[*selectorMatches]struct{}
}

// selectorMatches indexes one any-of dependency given by a key selector
// (a function, which no index can enumerate): the nodes whose keys it
// selects, filled by asking the selector about every node once, when the
// dependency is indexed, and then about each node added. Finding the
// providers of the dependency then costs what it matches instead of a
// call of the selector per node of the graph. refs counts the indexings
// of the dependency (the same dependencies are re-indexed as they are).
type selectorMatches struct {
	sel     func(string) bool
	refs    int
	members map[*node]struct{} // nil once no longer indexed
}

type prefixEntry struct {
	dependents map[*node]struct{}
	members    map[*node]struct{}
}

func newGraph() *graph {
	return &graph{nodes: map[string]*node{}, exact: map[string][]*node{},
		prefixes: map[string]*prefixEntry{}, selectors: map[*node]struct{}{}, matched: map[*selectorMatches]struct{}{}}
}

// add inserts a new node for key.
func (g *graph) add(key string) *node {
	n := &node{key: key}
	g.nodes[key] = n
	if len(g.exact) > 0 {
		if ns, ok := g.exact[key]; ok {
			n.dependents = ns
			delete(g.exact, key)
		}
	}
	g.eachPrefixOf(key, func(e *prefixEntry) { e.members[n] = struct{}{} })
	for sm := range g.matched {
		if sm.sel(key) {
			sm.members[n] = struct{}{}
		}
	}
	return n
}

// remove drops n and its dependencies from the graph.
func (g *graph) remove(n *node) {
	g.setDeps(n, nil, nil)
	// Its dependents forget it (see provider): a removed node is not kept
	// alive, nor what it refers to.
	for _, m := range n.dependents {
		if m.dep0 == n {
			m.dep0 = nil
		}
	}
	if len(n.dependents) > 0 {
		// Values still waiting for the key. A list held in n itself is
		// copied: the index, and the key's next node, must not keep the
		// removed node alive.
		ds := n.dependents
		if &ds[0] == &n.dependentOne[0] {
			ds = slices.Clone(ds)
		}
		g.exact[n.key] = ds
		n.dependents = nil
	}
	g.eachPrefixOf(n.key, func(e *prefixEntry) { delete(e.members, n) })
	for sm := range g.matched {
		delete(sm.members, n)
	}
	delete(g.nodes, n.key)
	n.removed = true
}

// has tells whether n is the node of its key in the graph, without a
// lookup: a key gets a new node only once its node was removed.
func (g *graph) has(n *node) bool { return !n.removed }

// eachPrefixOf calls f for every indexed prefix that key has: one lookup
// per prefix length, whatever the number of nodes.
func (g *graph) eachPrefixOf(key string, f func(*prefixEntry)) {
	if len(g.prefixes) == 0 {
		return
	}
	for i := 0; i <= len(key); i++ {
		if e := g.prefixes[key[:i]]; e != nil {
			f(e)
		}
	}
}

// setDeps replaces the indexed dependencies of n: those of the value it
// wants and, when different, those of the value in the southbound.
func (g *graph) setDeps(n *node, deps, sbDeps []Dependency) {
	if sameIndexed(n.deps, deps) && sameIndexed(n.sbDeps, sbDeps) {
		// Dependencies asked again for an equal value are indexed as they
		// are: a resync re-asks every value it touches.
		n.deps = deps
		n.sbDeps = sbDeps
		return
	}
	old := append(n.deps[:len(n.deps):len(n.deps)], n.sbDeps...)
	for _, dep := range old {
		g.unindex(n, dep)
	}
	n.deps = deps
	n.sbDeps = sbDeps
	n.dep0 = nil // remembered only while indexed (see remove)
	for _, dep := range deps {
		g.index(n, dep)
	}
	for _, dep := range sbDeps {
		g.index(n, dep)
	}
	// Prefixes nobody depends on any more are dropped only now, so that a
	// value keeping its prefix does not make the index rebuild it.
	for _, dep := range old {
		for _, p := range dep.AnyOf.KeyPrefixes {
			if e := g.prefixes[p]; e != nil && len(e.dependents) == 0 {
				delete(g.prefixes, p)
			}
		}
		if sm := dep.matches; sm != nil && sm.refs == 0 && sm.members != nil {
			delete(g.matched, sm)
			sm.members = nil
		}
	}
}

// sameIndexed tells whether two lists of dependencies are indexed the
// same: the same keys and prefixes, and the same selector indexes (a
// selector is a function: only the very same dependency is the same).
func sameIndexed(a, b []Dependency) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := &a[i], &b[i]
		if x.Key != y.Key || !slices.Equal(x.AnyOf.KeyPrefixes, y.AnyOf.KeyPrefixes) ||
			(x.AnyOf.KeySelector != nil) != (y.AnyOf.KeySelector != nil) ||
			x.AnyOf.KeySelector != nil && x.matches != y.matches {
			return false
		}
	}
	return true
}

func (g *graph) index(n *node, dep Dependency) {
	if dep.Key != "" {
		if p := g.provider(n, dep.Key); p != nil {
			if !slices.Contains(p.dependents, n) {
				if p.dependents == nil {
					p.dependents = p.dependentOne[:0]
				}
				p.dependents = append(p.dependents, n)
			}
		} else if ns := g.exact[dep.Key]; !slices.Contains(ns, n) {
			g.exact[dep.Key] = append(ns, n)
		}
		return
	}
	for _, p := range dep.AnyOf.KeyPrefixes {
		e := g.prefixes[p]
		if e == nil {
			// A new prefix is filled once from all nodes; prefixes are few
			// and long-lived compared with transactions.
			e = &prefixEntry{dependents: map[*node]struct{}{}, members: map[*node]struct{}{}}
			for k, m := range g.nodes {
				if strings.HasPrefix(k, p) {
					e.members[m] = struct{}{}
				}
			}
			g.prefixes[p] = e
		}
		e.dependents[n] = struct{}{}
	}
	if dep.AnyOf.KeySelector != nil {
		g.selectors[n] = struct{}{}
		if sm := dep.matches; sm != nil {
			if sm.members == nil {
				sm.members = map[*node]struct{}{}
				for k, m := range g.nodes {
					if sm.sel(k) {
						sm.members[m] = struct{}{}
					}
				}
				g.matched[sm] = struct{}{}
			}
			sm.refs++
		}
	}
}

func (g *graph) unindex(n *node, dep Dependency) {
	if dep.Key != "" {
		if p := g.provider(n, dep.Key); p != nil {
			if i := slices.Index(p.dependents, n); i >= 0 {
				p.dependents = slices.Delete(p.dependents, i, i+1)
			}
		} else {
			removeNode(g.exact, dep.Key, n)
		}
		return
	}
	for _, p := range dep.AnyOf.KeyPrefixes {
		if e := g.prefixes[p]; e != nil {
			delete(e.dependents, n)
		}
	}
	if dep.AnyOf.KeySelector != nil {
		delete(g.selectors, n)
		if sm := dep.matches; sm != nil && sm.refs > 0 {
			sm.refs--
		}
	}
}

// dependents returns the nodes with a dependency that p's key satisfies,
// sorted by key. The result may be the index's own list (sorted in
// place, when only dependencies on p's exact key are indexed): callers
// read it before they change the graph, and never modify it.
func (g *graph) dependents(p *node) []*node {
	if len(g.prefixes) == 0 && len(g.selectors) == 0 {
		// The common case costs no allocation: the list is sorted once
		// and stays so until a dependent is added.
		out := g.exactDependents(p)
		if !slices.IsSortedFunc(out, compareKeys) {
			slices.SortFunc(out, compareKeys)
		}
		return out
	}
	out := slices.Clone(g.exactDependents(p))
	g.eachPrefixOf(p.key, func(e *prefixEntry) {
		for n := range e.dependents {
			out = append(out, n)
		}
	})
	for n := range g.selectors {
		// Indexed for the dependencies of either value, as in index.
		if selects(n.deps, p.key) || selects(n.sbDeps, p.key) {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		return nil
	}
	slices.SortFunc(out, compareKeys)
	return slices.Compact(out)
}

// exactDependents returns the list of the nodes depending on exactly p's
// key: p's own while p is in the graph, else that of the key's node now, or
// the index's for a key without a node.
func (g *graph) exactDependents(p *node) []*node {
	if !p.removed {
		return p.dependents
	}
	if q := g.nodes[p.key]; q != nil {
		return q.dependents
	}
	return g.exact[p.key]
}

func compareKeys(a, b *node) int { return strings.Compare(a.key, b.key) }

// selects tells whether a selector dependency of deps matches key.
func selects(deps []Dependency, key string) bool {
	for _, dep := range deps {
		if dep.AnyOf.KeySelector != nil && dep.matchesKey(key) {
			return true
		}
	}
	return false
}

// providers calls f for every node that can satisfy dep, until f returns
// false. A value can satisfy its own dependency (a cycle of one).
func (g *graph) providers(n *node, dep Dependency, f func(*node) bool) {
	if dep.Key != "" {
		if p := g.provider(n, dep.Key); p != nil {
			f(p)
		}
		return
	}
	for _, pre := range dep.AnyOf.KeyPrefixes {
		e := g.prefixes[pre]
		if e == nil {
			// Not indexed: a prefix no value depends on yet (a request's
			// new dependencies, asked before they are set; see valueGoes)
			// has its providers all the same. Every node is asked, as
			// for a selector (TestAdv22UpdateMetByANotifiedValueDoesNotTakeItsDependentDown:
			// a/1's update Requiring any n/ key, met by the notified n/1,
			// was taken for one that goes).
			for k, p := range g.nodes {
				if strings.HasPrefix(k, pre) && !f(p) {
					return
				}
			}
			continue
		}
		for p := range e.members {
			if !f(p) {
				return
			}
		}
	}
	if dep.AnyOf.KeySelector != nil {
		if sm := dep.matches; sm != nil && sm.members != nil {
			for p := range sm.members {
				if !f(p) {
					return
				}
			}
			return
		}
		// Not indexed (dependencies computed for a question only): every
		// node is asked.
		for k, p := range g.nodes {
			if dep.AnyOf.KeySelector(k) && !f(p) {
				return
			}
		}
	}
}

// provider returns the node of key, a dependency of n. The node of n's
// first dependency is remembered in n (dep0): readiness, statuses and the
// in-sync check ask for it again and again, and each lookup in a map of
// a large graph costs a few cache misses. A remembered node is used only
// while it is still the node of its key (a key has one node in the graph
// at a time); an absent one is looked up every time.
func (g *graph) provider(n *node, key string) *node {
	if p := n.dep0; p != nil && !p.removed && p.key == key {
		return p
	}
	p := g.nodes[key]
	if p != nil && len(n.deps) > 0 && n.deps[0].Key == key {
		n.dep0 = p
	}
	return p
}

// removeNode removes n from the list of k in m, and the list once empty.
func removeNode(m map[string][]*node, k string, n *node) {
	ns := m[k]
	i := slices.Index(ns, n)
	switch {
	case i < 0:
	case len(ns) == 1:
		delete(m, k)
	default:
		m[k] = slices.Delete(ns, i, i+1)
	}
}

// checkDeps rejects dependencies that nothing could ever satisfy: a
// descriptor bug that would otherwise leave the value PENDING forever.
func checkDeps(deps []Dependency) error {
	for i, d := range deps {
		if d.Key == "" && len(d.AnyOf.KeyPrefixes) == 0 && d.AnyOf.KeySelector == nil {
			return fmt.Errorf("kvscheduler: dependency %d (%q) has neither Key nor AnyOf", i, d.Label)
		}
	}
	return nil
}
