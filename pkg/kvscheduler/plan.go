package kvscheduler

import "slices"

// op is one planned operation.
type op struct {
	kind     Operation
	key      string
	prev     any
	new      any
	d        *regDescriptor
	base     string
	recreate bool
	retry    RetryOptions
}

// plan diffs the target against the actual state. The order is: deletes
// (dependents first), re-creates (their deletes, then their creates), creates
// and updates (dependencies first).
func (s *Scheduler) plan(t *target) []op {
	var deletes, recreates, updates []op
	// Every node missing from the actual state may need a create; the
	// nodes are kept until the ops are arranged, which saves a copy of the
	// (large) ops.
	creates := make([]*tnode, 0, max(len(t.nodes)-len(s.actual), 0)+16)
	recreated := map[string]bool{}
	for k, a := range s.actual {
		if a.implicit || a.origin == FromSB || a.d == nil || t.nodes[k] != nil {
			continue
		}
		deletes = append(deletes, op{kind: OpDelete, key: k, prev: a.value, d: a.d, base: a.base})
	}
	for k, n := range t.nodes {
		if n.implicitNode() || n.pinned {
			continue
		}
		a := s.actual[k]
		switch {
		case a == nil || a.implicit:
			creates = append(creates, n)
		case safeEqual(n.d, k, a.value, n.value):
			continue
		case n.d.Update == nil || s.needsRecreate(n.d, k, a, n.value):
			recreated[k] = true
		default:
			updates = append(updates, op{kind: OpUpdate, key: k, prev: a.value, new: n.value, d: n.d,
				base: n.base, retry: s.retryOf(t, n)})
		}
	}
	if len(recreated) > 0 {
		s.recreateDependents(t, recreated)
		kept := updates[:0]
		for _, u := range updates {
			if !recreated[u.key] {
				kept = append(kept, u)
			}
		}
		updates = kept
		for k := range recreated {
			n := t.nodes[k]
			if n.implicitNode() {
				continue
			}
			a := s.actual[k]
			recreates = append(recreates, op{key: k, prev: a.value, new: n.value, d: n.d, base: n.base,
				recreate: true, retry: s.retryOf(t, n)})
		}
	}
	if len(deletes)+len(recreates)+len(creates)+len(updates) == 0 {
		return nil
	}
	pos := s.order(t, creates, deletes, recreates, updates)
	out := make([]op, 0, len(deletes)+2*len(recreates)+len(creates)+len(updates))
	out = arrange(out, deletes, pos, true)
	if len(recreates) > 0 {
		from := len(out)
		out = arrange(out, recreates, pos, true)
		for i := from; i < len(out); i++ {
			out[i].kind = OpDelete
		}
		from = len(out)
		out = arrange(out, recreates, pos, false)
		for i := from; i < len(out); i++ {
			out[i].kind = OpCreate
		}
	}
	if len(creates) > 0 {
		slots := make([]int32, len(pos))
		for i, n := range creates {
			slots[pos[n.key]] = int32(i) + 1
		}
		for _, i := range slots {
			if i > 0 {
				n := creates[i-1]
				out = append(out, op{kind: OpCreate, key: n.key, new: n.value, d: n.d, base: n.base,
					retry: s.retryOf(t, n)})
			}
		}
	}
	return arrange(out, updates, pos, false)
}

// arrange appends ops to out in the order of their positions (descending
// if desc). Positions are distinct and dense, so placing the ops in slots
// beats sorting large structs.
func arrange(out, ops []op, pos map[string]int, desc bool) []op {
	if len(ops) == 0 {
		return out
	}
	slots := make([]int32, len(pos))
	for i := range ops {
		slots[pos[ops[i].key]] = int32(i) + 1
	}
	for j := range slots {
		if desc {
			j = len(slots) - 1 - j
		}
		if i := slots[j]; i > 0 {
			out = append(out, ops[i-1])
		}
	}
	return out
}

func (s *Scheduler) needsRecreate(d *regDescriptor, k string, a *actualVal, v any) (re bool) {
	if d.UpdateWithRecreate == nil {
		return false
	}
	defer s.calling(d, "UpdateWithRecreate", k)()
	_ = guard(func() error { re = d.UpdateWithRecreate(k, a.value, v, a.metadata); return nil })
	return re
}

// retryOf returns the retry options of the transaction that last set the
// value or, for a derived value, its base.
func (s *Scheduler) retryOf(t *target, n *tnode) RetryOptions {
	for i := 0; n != nil && n.base != "" && i < 64; i++ {
		n = t.nodes[n.base]
	}
	if n == nil {
		return RetryOptions{}
	}
	if dv := s.desired[n.key]; dv != nil {
		return dv.retry
	}
	return RetryOptions{}
}

// recreateDependents adds to re every existing value that depends on (or
// derives from) a re-created one: deleting the dependency removes them too.
func (s *Scheduler) recreateDependents(t *target, re map[string]bool) {
	for changed := true; changed; {
		changed = false
		for k, n := range t.nodes {
			if re[k] || n.pinned || s.actual[k] == nil {
				continue
			}
			hit := n.base != "" && re[n.base]
			for _, dep := range n.deps {
				if hit {
					break
				}
				if dep.Key != "" {
					hit = re[dep.Key]
					continue
				}
				for r := range re {
					if dep.matches(r) {
						hit = true
						break
					}
				}
			}
			if hit {
				re[k] = true
				changed = true
			}
		}
	}
}

// order numbers the keys touched by the plan so that every value comes
// after the values it depends on (in the target or, for values about to be
// deleted, in the actual state). Cycles are cut arbitrarily: their members
// are created together anyway.
func (s *Scheduler) order(t *target, nodes []*tnode, lists ...[]op) map[string]int {
	total := len(nodes)
	for _, l := range lists {
		total += len(l)
	}
	roots := make([]string, 0, total)
	for _, n := range nodes {
		roots = append(roots, n.key)
	}
	for _, l := range lists {
		for _, o := range l {
			roots = append(roots, o.key)
		}
	}
	slices.Sort(roots)
	pos := make(map[string]int, len(roots)+len(roots)/8+8)
	// A key being visited has position -1 until its providers are done.
	next := 0
	// One buffer holds the providers of every key on the visit stack: a
	// nested visit appends after the ones its caller still iterates over.
	var buf []string
	var visit func(k string)
	visit = func(k string) {
		if _, ok := pos[k]; ok {
			return
		}
		pos[k] = -1
		from := len(buf)
		buf = s.providers(buf, t, k)
		to := len(buf)
		for i := from; i < to; i++ {
			visit(buf[i])
		}
		buf = buf[:from]
		pos[k] = next
		next++
	}
	for _, k := range roots {
		visit(k)
	}
	return pos
}

// providers appends the keys k depends on (or derives from) to out.
func (s *Scheduler) providers(out []string, t *target, k string) []string {
	start := len(out)
	var deps []Dependency
	if n := t.nodes[k]; n != nil {
		if n.base != "" {
			out = append(out, n.base)
		}
		deps = n.deps
	}
	if a := s.actual[k]; a != nil {
		if a.base != "" {
			out = append(out, a.base)
		}
		if n := t.nodes[k]; n == nil && a.d != nil && a.d.Dependencies != nil {
			deps, _ = callDeps(a.d, k, a.value)
		}
	}
	anyOf := false
	for _, dep := range deps {
		if dep.Key != "" {
			if dep.Key != k && (t.nodes[dep.Key] != nil || s.actual[dep.Key] != nil) {
				out = append(out, dep.Key)
			}
			continue
		}
		anyOf = true
		for k2 := range t.nodes {
			if k2 != k && dep.matches(k2) {
				out = append(out, k2)
			}
		}
		for k2 := range s.actual {
			if k2 != k && t.nodes[k2] == nil && dep.matches(k2) {
				out = append(out, k2)
			}
		}
	}
	if anyOf {
		// Map iteration order must not make plans differ between runs.
		slices.Sort(out[start:])
	}
	return out
}
