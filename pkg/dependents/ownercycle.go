package dependents

import (
	"slices"
	"strings"
	"sync"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// Cycles between owners. An owner's marker (RequiresOwner) and its latch
// (RequiresOwnerAvailable) need every one of its objects ready: an owner
// with an object waiting for another owner's marker has no marker itself.
// So owners whose waiting objects lead back to them (a RequiresOwner a;
// a and b each require the other) wait for ever. The scheduler sees no
// cycle there, only absent markers (the loop puts a marker once the
// objects are ready), so the registration finds it from the owners'
// reports and the scheduler's unmet dependencies, and the summary names
// it as a failure; cycle.go finds those within one owner's objects.

// cycleLog remembers the cycle last logged for each owner, so that a
// cycle is logged once, not at every status pass; the status handlers
// summarize owners concurrently.
type cycleLog struct {
	mu     sync.Mutex
	logged map[string]string // owner key -> the cycle logged
}

// note records cycle ("" when none) for the owner at key, and tells
// whether it differs from the one logged last.
func (l *cycleLog) note(key, cycle string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.logged[key] == cycle {
		return false
	}
	if l.logged == nil {
		l.logged = map[string]string{}
	}
	if cycle == "" {
		delete(l.logged, key)
	} else {
		l.logged[key] = cycle
	}
	return true
}

// ownersWaitedFor returns the owners, sorted, whose markers the pending
// objects of the owner at key wait for.
func (d *Dependents) ownersWaitedFor(key string) []string {
	rep, ok := d.reports.get(key)
	if !ok {
		return nil
	}
	var out []string
	for _, o := range rep.objects {
		if st := d.sched.GetValueStatus(o.key); st.State == kvscheduler.Pending {
			out = append(out, d.ownersIn(st.UnmetDependencies)...)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// ownerCycleVia returns the shortest cycle of owners from the owner at
// key, through one of first (the owners one of its objects waits for),
// back to it, or "" when none of first leads back. A cycle is judged per
// object: an object of an owner on a cycle that waits only for owners
// off it is created once they are ready, so it is not on the cycle. It
// follows the owners waited for breadth first, so that the cycle named is
// the shortest, and the same at every pass.
func (d *Dependents) ownerCycleVia(key string, first []string) string {
	parent := map[string]string{}
	queue := []string{}
	visit := func(cur string, next []string) bool {
		for _, n := range next {
			if n == key {
				return true
			}
			if _, seen := parent[n]; !seen {
				parent[n] = cur
				queue = append(queue, n)
			}
		}
		return false
	}
	if visit(key, first) {
		return d.cyclePath(key, key, parent)
	}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		if visit(cur, d.ownersWaitedFor(cur)) {
			return d.cyclePath(key, cur, parent)
		}
	}
	return ""
}

// cyclePath names the cycle from key to last (following parent back) and
// to key again.
func (d *Dependents) cyclePath(key, last string, parent map[string]string) string {
	path := []string{key}
	for cur := last; cur != key; cur = parent[cur] {
		path = append(path, cur)
	}
	slices.Reverse(path[1:])
	path = append(path, key)
	for i, k := range path {
		path[i] = d.ownerKind + " " + k
	}
	return strings.Join(path, " → ")
}

// logCycle logs, once per cycle, that the owner at key is on cycle.
func (d *Dependents) logCycle(key, cycle string) {
	if !d.cycles.note(key, cycle) || cycle == "" {
		return
	}
	d.log.Warnf("dependents %s: %s %s can never be ready: its objects wait, through other owners, for itself: "+
		"a dependency cycle between owners %s", d.name, d.ownerKind, key, cycle)
}
