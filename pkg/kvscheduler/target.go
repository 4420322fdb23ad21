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
	deps    []Dependency
	cnt     []int // providers per dependency still in the target
	removed bool
	// declared counts the descriptor's dependencies at the start of deps;
	// the dependency on the base, if any, follows them.
	declared int
	// matched holds, per any-of dependency, the keys that matched it
	// before pruning; some may have been pruned since.
	matched [][]string
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
	queue := make([]*tnode, 0, len(s.desired)*2)
	add := func(n *tnode) {
		t.nodes[n.key] = n
		queue = append(queue, n)
	}
	for k, a := range s.actual {
		if a.origin == FromSB && a.base == "" {
			if _, nb := s.desired[k]; !nb {
				add(&tnode{key: k, value: a.value, d: a.d, origin: FromSB, pinned: true})
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
		add(&tnode{key: k, value: dv.value, d: d, origin: FromNB})
	}
	// A failed delete keeps its value until retried.
	for k, f := range s.failed {
		if a := s.actual[k]; f.blocked && f.op == OpDelete && f.value == nil && a != nil && t.nodes[k] == nil {
			add(&tnode{key: k, value: a.value, d: a.d, base: a.base, origin: a.origin, pinned: true})
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
			add(&tnode{key: kv.Key, value: kv.Value, d: d, base: n.key, origin: n.origin, pinned: n.pinned || n.origin == FromSB})
		}
	}
	s.prune(t)
	return t
}

// blockedNode handles a key with a failed operation: while blocked it stays
// as it is; a changed value unblocks it.
func (s *Scheduler) blockedNode(t *target, k string, v any, base string, origin Origin, add func(*tnode)) bool {
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
		add(&tnode{key: k, value: a.value, d: a.d, base: base, origin: origin, pinned: true})
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
	rev := make(map[string][]rdep, len(t.nodes))
	var drop []*tnode
	var anyOf, gone []*tnode
	for _, n := range t.nodes {
		if n.pinned {
			continue
		}
		if n.d != nil && n.d.Dependencies != nil {
			deps, err := callDeps(n.d, n.key, n.value)
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
			n.deps = deps
		}
		n.declared = len(n.deps)
		if n.base != "" {
			n.deps = append(n.deps, Dependency{Key: n.base}) // a derived value needs its base
		}
		n.cnt = make([]int, len(n.deps))
		for i, dep := range n.deps {
			if dep.Key == "" {
				anyOf = append(anyOf, n)
				continue
			}
			if t.nodes[dep.Key] != nil {
				n.cnt[i] = 1
				rev[dep.Key] = append(rev[dep.Key], rdep{n, i})
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
				for k := range t.nodes {
					if k != n.key && dep.matches(k) {
						n.cnt[i]++
						rev[k] = append(rev[k], rdep{n, i})
						n.matched[i] = append(n.matched[i], k)
					}
				}
			}
		}
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
		for _, r := range rev[n.key] {
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
	if n.declared == 0 {
		return nil
	}
	out := make([]DependencyStatus, n.declared)
	// One array backs the keys of all exact-key dependencies: statuses are
	// rebuilt by every transaction, so allocations count.
	exact := make([]string, n.declared)
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
