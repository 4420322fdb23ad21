package kvscheduler

import "slices"

// ready tells whether n can be created now: it is owned by the southbound
// (never checked), or its base exists and every dependency has a provider
// that exists. A value in a dependency cycle is ready when the cycle as a
// whole can be created: its members count as providers for each other.
func (w *walker) ready(n *node) bool {
	ok, _ := w.readyHow(n)
	return ok
}

// readyHow is ready, and tells whether n is ready only as a member of a
// cycle, counting on the other members to be created.
func (w *walker) readyHow(n *node) (ok, inCycle bool) {
	if n.origin == FromSB {
		return true, false
	}
	if n.depErr() != nil || !w.baseAvail(n, nil) {
		return false, false
	}
	if w.depsMet(n, nil) {
		return true, false
	}
	ok = w.readyInCycle(n)
	return ok, ok
}

func (w *walker) baseAvail(n *node, region map[*node]bool) bool {
	if n.base == "" {
		return true
	}
	b := w.g.nodes[n.base]
	return b != nil && (b.avail || region[b])
}

// depsMet tells whether every dependency of n has a provider that exists
// (or, with region, that is about to be created with n).
func (w *walker) depsMet(n *node, region map[*node]bool) bool {
	for _, dep := range n.deps {
		if !w.depMet(n, dep, region) {
			return false
		}
	}
	return true
}

func (w *walker) depMet(n *node, dep Dependency, region map[*node]bool) bool {
	met := false
	w.g.providers(n, dep, func(p *node) bool {
		met = p.avail || region[p]
		return !met
	})
	return met
}

// candidate tells whether p, which does not exist, could be created in
// this transaction as a member of a cycle. A derived value exists only
// after its base: it is no member of a cycle its base waits for.
func (w *walker) candidate(p *node) bool {
	if p.base != "" {
		if b := w.g.nodes[p.base]; b == nil || !b.avail {
			return false
		}
	}
	return !p.avail && !p.exists() && p.want != nil && p.d != nil && p.dErr() == nil && p.depErr() == nil && !p.blocked() &&
		p.origin == FromNB && p.state != Invalid && p.state != Unimplemented && !w.failedHere(p) &&
		!w.later(p)
}

// readyInCycle tells whether n is in a dependency cycle that can be
// created as a whole: it collects the values n waits for that wait
// themselves (following unmet dependencies only), keeps those that wait,
// directly or not, for n (its strongly connected component), and then the
// largest subset whose members have every dependency met within it or by
// existing values. n is ready if it stays: the cycle is created together,
// as the reference treats a strongly connected component as one value.
// The cost is the number of values n waits for, not the size of the graph.
func (w *walker) readyInCycle(n *node) bool {
	if !w.inWaitingCycle(n) {
		return false
	}
	waitsFor := map[*node][]*node{} // m -> the waiting values m waits for
	seen := map[*node]bool{n: true}
	queue := []*node{n}
	add := func(m, p *node) {
		waitsFor[m] = append(waitsFor[m], p)
		if !seen[p] {
			seen[p] = true
			queue = append(queue, p)
		}
	}
	for len(queue) > 0 {
		m := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		if m.base != "" {
			if b := w.g.nodes[m.base]; b != nil && !b.avail && w.candidate(b) {
				add(m, b)
			}
		}
		for _, dep := range m.deps {
			if n.avail && m != n && dep.matchesKey(n.key) {
				add(m, n) // met by n, whose own readiness is in question
				continue
			}
			if w.depMet(m, dep, nil) {
				continue
			}
			w.g.providers(m, dep, func(p *node) bool {
				if w.candidate(p) || p == n {
					add(m, p)
				}
				return true
			})
		}
	}
	// The component: the values from which n is reached.
	waitedBy := map[*node][]*node{}
	for m, ps := range waitsFor {
		for _, p := range ps {
			waitedBy[p] = append(waitedBy[p], m)
		}
	}
	region := map[*node]bool{}
	stack := []*node{n}
	for len(stack) > 0 {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, m := range waitedBy[p] {
			if !region[m] {
				region[m] = true
				stack = append(stack, m)
			}
		}
	}
	if !region[n] {
		return false // n is in no cycle
	}
	for changed := true; changed; {
		changed = false
		for m, in := range region {
			if in && !(w.baseAvail(m, region) && w.depsMet(m, region)) {
				region[m] = false
				changed = true
			}
		}
	}
	return region[n]
}

// waitsOn calls f for every value that m waits for and that waits itself
// (or is n), until f returns false.
func (w *walker) waitsOn(m, n *node, f func(p *node) bool) {
	if m.base != "" {
		if b := w.g.nodes[m.base]; b != nil && !b.avail && (b == n || w.candidate(b)) && !f(b) {
			return
		}
	}
	for _, dep := range m.deps {
		if n.avail && m != n && dep.matchesKey(n.key) {
			// Met by n, which exists: whether n may stay is the question,
			// so m waits for it as it would if n did not exist.
			if !f(n) {
				return
			}
			continue
		}
		if w.depMet(m, dep, nil) {
			continue
		}
		stop := false
		w.g.providers(m, dep, func(p *node) bool {
			if (p == n || w.candidate(p)) && !f(p) {
				stop = true
			}
			return !stop
		})
		if stop {
			return
		}
	}
}

// inWaitingCycle tells whether n waits, through values that wait
// themselves, for itself. It searches from n both ways (what n waits for,
// and what waits for n) one step at a time and stops as soon as either
// side runs out: a long chain of values waiting one for the next (built
// in the worst order) then costs the shorter side, not the whole chain
// for every value of it.
func (w *walker) inWaitingCycle(n *node) bool {
	fwd, bwd := []*node{n}, []*node{n}
	seenF, seenB := map[*node]bool{n: true}, map[*node]bool{n: true}
	found := false
	for !found {
		if len(fwd) == 0 || len(bwd) == 0 {
			return false
		}
		m := fwd[len(fwd)-1]
		fwd = fwd[:len(fwd)-1]
		w.waitsOn(m, n, func(p *node) bool {
			if p == n {
				found = true
				return false
			}
			if !seenF[p] {
				seenF[p] = true
				fwd = append(fwd, p)
			}
			return true
		})
		if found {
			break
		}
		m = bwd[len(bwd)-1]
		bwd = bwd[:len(bwd)-1]
		var waiting []*node
		for _, k := range m.derived {
			if c := w.g.nodes[k]; c != nil {
				waiting = append(waiting, c)
			}
		}
		for _, x := range append(waiting, w.g.dependents(m)...) {
			if x != n && !w.candidate(x) || seenB[x] && x != n {
				continue
			}
			w.waitsOn(x, n, func(p *node) bool {
				if p == m {
					if x == n {
						found = true
					} else {
						seenB[x] = true
						bwd = append(bwd, x)
					}
					return false
				}
				return true
			})
			if found {
				break
			}
		}
	}
	return true
}

// unmet lists the labels of the dependencies of n that no existing value
// satisfies, with its base if that does not exist, appended to sc.strs
// (nil when there are none).
func (w *walker) unmet(n *node, sc *statusScratch) []string {
	start := len(sc.strs)
	if !w.baseAvail(n, nil) {
		sc.strs = append(sc.strs, n.base)
	}
	for _, dep := range n.deps {
		if !w.depMet(n, dep, nil) {
			sc.strs = append(sc.strs, dep.name())
		}
	}
	if len(sc.strs) == start {
		return nil
	}
	return sc.strs[start:len(sc.strs):len(sc.strs)]
}

// depStatuses describes the declared dependencies of n: met or not, and
// what satisfies them (any-of: the matching values that exist when met,
// the matching values that wait themselves when not).
//
// They are built in sc's buffers: see statusScratch.
func (w *walker) depStatuses(n *node, sc *statusScratch) []DependencyStatus {
	if len(n.deps) == 0 {
		return nil
	}
	start := len(sc.deps)
	for _, dep := range n.deps {
		ds := DependencyStatus{Label: dep.name(), Key: dep.Key, Met: w.depMet(n, dep, nil), Kind: dep.Kind}
		from := len(sc.strs)
		if dep.Key != "" {
			sc.strs = append(sc.strs, dep.Key)
		} else {
			w.g.providers(n, dep, func(p *node) bool {
				if ds.Met && p.avail || !ds.Met && p.want != nil {
					sc.strs = append(sc.strs, p.key)
				}
				return true
			})
		}
		if len(sc.strs) > from {
			ds.Keys = sc.strs[from:len(sc.strs):len(sc.strs)]
			slices.Sort(ds.Keys)
		}
		sc.deps = append(sc.deps, ds)
	}
	return sc.deps[start:len(sc.deps):len(sc.deps)]
}
