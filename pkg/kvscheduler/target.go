package kvscheduler

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
)

// tnode is a value of the target state: what should exist in the southbound
// once the transaction is applied (assuming no failures). The target is
// recomputed from the desired and actual maps; nothing is deep-copied, the
// nodes only reference the values.
type tnode struct {
	key     string
	value   any
	d       *regDescriptor
	base    string
	origin  Origin
	pinned  bool // exists as it is; dependencies are not checked
	removed bool
	deps    []Dependency
	cnt     []int // providers per dependency still in the target
	// declared counts the descriptor's dependencies at the start of deps;
	// the dependency on the base, if any, follows them.
	declared int
	// matched holds, per any-of dependency, the keys that matched it
	// before pruning; some may have been pruned since.
	matched [][]string
	// revAt-1 and nrev locate, in prune's array of reverse edges, the
	// dependencies of other nodes this one provides for (revAt is 0 when
	// there are none). Offsets keep the node small: targets are retained.
	revAt, nrev int32
}

// implicitNode has no operations of its own.
func (n *tnode) implicitNode() bool { return n.d == nil || n.origin == FromSB }

type rdep struct {
	n *tnode
	i int
}

// target is the result of a simulation.
type target struct {
	nodes map[string]*tnode
	// notReady holds the statuses of desired or derived values left out.
	notReady map[string]ValueStatus
	// pending holds the values pruned for unmet dependencies, so that the
	// cached view can still show what they wait to become.
	pending map[string]*tnode
}

func (s *Scheduler) computeTarget() *target {
	t := &target{nodes: make(map[string]*tnode, len(s.desired)*2), notReady: map[string]ValueStatus{},
		pending: map[string]*tnode{}}
	if len(s.reg.cache) == 0 && len(s.desired) > 64 {
		// The owner cache of a new or changed registry fills up now, with
		// the derived keys too if any.
		hint := len(s.desired)
		for _, d := range s.reg.order {
			if d.DerivedValues != nil {
				hint *= 2
				break
			}
		}
		s.reg.cache = make(map[string]keyOwner, hint)
	}
	queue := make([]*tnode, 0, len(s.desired)*2)
	// The nodes are allocated in chunks: the target is rebuilt by every
	// transaction (and pass), so one allocation per node counts.
	chunk := len(s.desired) + 8
	var slab []tnode
	add := func(v tnode) {
		if len(slab) == cap(slab) {
			slab = make([]tnode, 0, chunk)
		}
		slab = append(slab, v)
		n := &slab[len(slab)-1]
		t.nodes[n.key] = n
		queue = append(queue, n)
	}
	for k, a := range s.actual {
		if a.origin == FromSB && a.base == "" {
			if _, nb := s.desired[k]; !nb {
				add(tnode{key: k, value: a.value, d: a.d, origin: FromSB, pinned: true})
			}
		}
	}
	for k, dv := range s.desired {
		if s.blockedNode(t, k, dv.value, "", FromNB, add) {
			continue
		}
		d, err := s.reg.owner(k)
		switch {
		case err != nil:
			t.notReady[k] = ValueStatus{Key: k, State: Invalid, Error: err}
			continue
		case d == nil:
			t.notReady[k] = ValueStatus{Key: k, State: Unimplemented}
			continue
		}
		if st, ok := s.validate(d, k, dv.value); !ok {
			t.notReady[k] = st
			continue
		}
		add(tnode{key: k, value: dv.value, d: d, origin: FromNB})
	}
	// A failed delete keeps its value until retried.
	for k, f := range s.failed {
		if a := s.actual[k]; f.blocked && f.op == OpDelete && f.value == nil && a != nil && t.nodes[k] == nil {
			add(tnode{key: k, value: a.value, d: a.d, base: a.base, origin: a.origin, pinned: true})
		}
	}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		if n.d == nil || n.d.DerivedValues == nil {
			continue
		}
		derived, err := callDerived(n.d, n.key, n.value)
		if err != nil {
			t.notReady[n.key] = ValueStatus{Key: n.key, State: Invalid, Error: err, Descriptor: n.d.Name}
			continue
		}
		for _, kv := range derived {
			if kv.Key == "" || kv.Value == nil || t.nodes[kv.Key] != nil {
				continue
			}
			if s.blockedNode(t, kv.Key, kv.Value, n.key, n.origin, add) {
				continue
			}
			d, err := s.reg.owner(kv.Key)
			if err != nil {
				t.notReady[kv.Key] = ValueStatus{Key: kv.Key, State: Invalid, Error: err, Derived: true, BaseKey: n.key}
				continue
			}
			if d != nil {
				if st, ok := s.validate(d, kv.Key, kv.Value); !ok {
					st.Derived, st.BaseKey = true, n.key
					t.notReady[kv.Key] = st
					continue
				}
			}
			add(tnode{key: kv.Key, value: kv.Value, d: d, base: n.key, origin: n.origin, pinned: n.pinned || n.origin == FromSB})
		}
	}
	s.prune(t)
	return t
}

// blockedNode handles a key with a failed operation: while blocked it stays
// as it is; a changed value unblocks it.
func (s *Scheduler) blockedNode(t *target, k string, v any, base string, origin Origin, add func(tnode)) bool {
	f := s.failed[k]
	if f == nil {
		return false
	}
	d, _ := s.reg.owner(k)
	same := f.value != nil && (d == nil && reflect.DeepEqual(f.value, v) || d != nil && safeEqual(d, k, f.value, v))
	if !same {
		delete(s.failed, k)
		return false
	}
	if !f.blocked {
		return false
	}
	if a := s.actual[k]; a != nil {
		add(tnode{key: k, value: a.value, d: a.d, base: base, origin: origin, pinned: true})
		return true
	}
	state := Failed
	if f.retrying {
		state = Retrying
	}
	t.notReady[k] = ValueStatus{Key: k, State: state, LastOp: f.op, Error: f.err, Derived: base != "", BaseKey: base}
	return true
}

func (s *Scheduler) validate(d *regDescriptor, k string, v any) (ValueStatus, bool) {
	if d.Create == nil {
		return ValueStatus{Key: k, State: Invalid, Descriptor: d.Name,
			Error: fmt.Errorf("kvscheduler: descriptor %q cannot create values", d.Name)}, false
	}
	if d.Validate == nil {
		return ValueStatus{}, true
	}
	err := guard(func() error { return d.Validate(k, v) })
	if err == nil {
		return ValueStatus{}, true
	}
	st := ValueStatus{Key: k, State: Invalid, Error: err, Descriptor: d.Name}
	var ive *InvalidValueError
	if errors.As(err, &ive) {
		st.InvalidFields = ive.Fields
	}
	return st, false
}

// prune removes from the target every value with an unmet dependency, until
// none is left. It computes the greatest fixed point, so a cycle of values
// whose external dependencies are met stays in the target as a whole.
func (s *Scheduler) prune(t *target) {
	type edge struct {
		p *tnode
		r rdep
	}
	// The edges, dependencies and counters of all nodes share a few large
	// allocations: prune runs for every target.
	edges := make([]edge, 0, len(t.nodes))
	var depSlab []Dependency
	var cntSlab []int
	var drop []*tnode
	var anyOf, gone []*tnode
	for _, n := range t.nodes {
		if n.pinned {
			continue
		}
		var deps []Dependency
		if n.d != nil && n.d.Dependencies != nil {
			var err error
			deps, err = callDeps(n.d, n.key, n.value)
			if err != nil {
				t.notReady[n.key] = ValueStatus{Key: n.key, State: Invalid, Error: err, Descriptor: n.d.Name}
				drop = append(drop, n)
				continue
			}
			if err := checkDeps(deps); err != nil {
				t.notReady[n.key] = ValueStatus{Key: n.key, State: Invalid, Error: err, Descriptor: n.d.Name}
				drop = append(drop, n)
				continue
			}
		}
		n.declared = len(deps)
		need := len(deps)
		if n.base != "" {
			need++
		}
		if need > 0 {
			if cap(depSlab)-len(depSlab) < need {
				c := max(need, len(t.nodes)+16)
				depSlab = make([]Dependency, 0, c)
				cntSlab = make([]int, 0, c)
			}
			from := len(depSlab)
			depSlab = append(depSlab, deps...)
			if n.base != "" {
				depSlab = append(depSlab, Dependency{Key: n.base}) // a derived value needs its base
			}
			n.deps = depSlab[from:len(depSlab):len(depSlab)]
			cntSlab = cntSlab[:len(depSlab)]
			n.cnt = cntSlab[from:len(depSlab):len(depSlab)]
		} else {
			n.deps = deps
			n.cnt = []int{}
		}
		for i, dep := range n.deps {
			if dep.Key == "" {
				anyOf = append(anyOf, n)
				continue
			}
			if p := t.nodes[dep.Key]; p != nil {
				n.cnt[i] = 1
				edges = append(edges, edge{p, rdep{n, i}})
				p.nrev++
			}
		}
	}
	if len(anyOf) > 0 {
		seen := map[*tnode]bool{}
		for _, n := range anyOf {
			if seen[n] {
				continue
			}
			seen[n] = true
			for i, dep := range n.deps {
				if dep.Key != "" {
					continue
				}
				if n.matched == nil {
					n.matched = make([][]string, len(n.deps))
				}
				for k, p := range t.nodes {
					if k != n.key && dep.matches(k) {
						n.cnt[i]++
						edges = append(edges, edge{p, rdep{n, i}})
						p.nrev++
						n.matched[i] = append(n.matched[i], k)
					}
				}
			}
		}
	}
	revs := make([]rdep, len(edges))
	off := int32(0)
	for _, e := range edges {
		if e.p.revAt == 0 {
			e.p.revAt = off + 1
			off += e.p.nrev
			e.p.nrev = 0
		}
		revs[e.p.revAt-1+e.p.nrev] = e.r
		e.p.nrev++
	}
	for _, n := range t.nodes {
		for _, c := range n.cnt {
			if c == 0 {
				drop = append(drop, n)
				break
			}
		}
	}
	for len(drop) > 0 {
		n := drop[len(drop)-1]
		drop = drop[:len(drop)-1]
		if n.removed {
			continue
		}
		n.removed = true
		gone = append(gone, n)
		delete(t.nodes, n.key)
		if _, ok := t.notReady[n.key]; !ok {
			st := ValueStatus{Key: n.key, State: Pending, Derived: n.base != "", BaseKey: n.base}
			if n.d != nil {
				st.Descriptor = n.d.Name
			}
			t.notReady[n.key] = st
		}
		if n.revAt == 0 {
			continue
		}
		for _, r := range revs[n.revAt-1 : n.revAt-1+n.nrev] {
			r.n.cnt[r.i]--
			if r.n.cnt[r.i] == 0 && !r.n.removed {
				drop = append(drop, r.n)
			}
		}
	}
	// Unmet dependencies are known only now that the pruning is complete.
	for _, n := range gone {
		st := t.notReady[n.key]
		if st.State != Pending {
			continue
		}
		t.pending[n.key] = n
		st.Dependencies = t.depStatuses(n)
		for i, dep := range n.deps {
			if i < len(n.cnt) && n.cnt[i] == 0 {
				st.UnmetDependencies = append(st.UnmetDependencies, dep.name())
			}
		}
		t.notReady[n.key] = st
	}
}

// depStatuses describes the declared dependencies of n against the pruned
// target. It is called once the pruning is complete, when the provider
// counts tell which dependencies are met.
func (t *target) depStatuses(n *tnode) []DependencyStatus {
	var sl depSlab
	return t.depStatusesIn(&sl, n)
}

// depSlab hands out the dependency statuses of many values from a few
// shared arrays: statuses are rebuilt by every transaction, so allocations
// count. The slices handed out are capped, so appending to one cannot
// overwrite another.
type depSlab struct {
	ds    []DependencyStatus
	keys  []string
	chunk int
}

func (sl *depSlab) alloc(n int) ([]DependencyStatus, []string) {
	if cap(sl.ds)-len(sl.ds) < n {
		c := max(n, sl.chunk)
		sl.ds = make([]DependencyStatus, 0, c)
		sl.keys = make([]string, 0, c)
	}
	from := len(sl.ds)
	sl.ds = sl.ds[:from+n]
	sl.keys = sl.keys[:from+n]
	return sl.ds[from : from+n : from+n], sl.keys[from : from+n : from+n]
}

func (t *target) depStatusesIn(sl *depSlab, n *tnode) []DependencyStatus {
	if n.declared == 0 {
		return nil
	}
	// One array backs the keys of all exact-key dependencies.
	out, exact := sl.alloc(n.declared)
	for i, dep := range n.deps[:n.declared] {
		ds := DependencyStatus{Label: dep.name(), Key: dep.Key, Met: i < len(n.cnt) && n.cnt[i] > 0}
		if dep.Key != "" {
			exact[i] = dep.Key
			ds.Keys = exact[i : i+1 : i+1]
		} else if i < len(n.matched) {
			// A met dependency lists what satisfies it; an unmet one what
			// would, once it leaves PENDING itself (none of its matches is
			// left in the target).
			for _, k := range n.matched[i] {
				if !ds.Met || t.nodes[k] != nil {
					ds.Keys = append(ds.Keys, k)
				}
			}
			sort.Strings(ds.Keys)
		}
		out[i] = ds
	}
	return out
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
