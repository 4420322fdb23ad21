package shard

import (
	"sync"

	"github.com/lariat-dev/lariat/pkg/controller"
)

// lingering is what a Join knows of the passes of its terms' handlers
// still under way, by object and member. A term whose handlers outlived
// its stop grace period is lost while they still run, and Join's next term
// has a factory (and controllers) of its own, which cannot know of them:
// once the sharder moves such an object to the next term's ID (after the
// lost term's Lease expired), the next term's gate holds its passes back
// until the lost term's pass over it returned, so that one process never
// runs two handlers for one object at once.
type lingering struct {
	mu     sync.Mutex
	passes map[controller.ObjectRef]map[*Member]int
}

// tracker returns the PassTracker of m's factories: inner (m's Elector's,
// for the fence's preconditions), recording each pass in l as well.
func (l *lingering) tracker(m *Member, inner controller.PassTracker) controller.PassTracker {
	return &lingeringTracker{l: l, m: m, inner: inner}
}

// busyElsewhere reports whether a pass of another member (an earlier term)
// over obj is under way.
func (l *lingering) busyElsewhere(m *Member, obj controller.ObjectRef) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for other := range l.passes[obj] {
		if other != m {
			return true
		}
	}
	return false
}

// anyElsewhere reports whether a pass of another member than m is under
// way at all.
func (l *lingering) anyElsewhere(m *Member) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, byMember := range l.passes {
		for other := range byMember {
			if other != m {
				return true
			}
		}
	}
	return false
}

func (l *lingering) add(obj controller.ObjectRef, m *Member) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.passes == nil {
		l.passes = map[controller.ObjectRef]map[*Member]int{}
	}
	if l.passes[obj] == nil {
		l.passes[obj] = map[*Member]int{}
	}
	l.passes[obj][m]++
}

func (l *lingering) remove(obj controller.ObjectRef, m *Member) {
	l.mu.Lock()
	defer l.mu.Unlock()
	byMember := l.passes[obj]
	if byMember[m]--; byMember[m] <= 0 {
		delete(byMember, m)
	}
	if len(byMember) == 0 {
		delete(l.passes, obj)
	}
}

// lingeringTracker is a member's PassTracker under Join.
type lingeringTracker struct {
	l     *lingering
	m     *Member
	inner controller.PassTracker
}

// Handling records the pass in the Join's table and in the member's own.
func (t *lingeringTracker) Handling(obj controller.ObjectRef, resourceVersion string) func() {
	done := t.inner.Handling(obj, resourceVersion)
	t.l.add(obj, t.m)
	return func() {
		t.l.remove(obj, t.m)
		done()
	}
}

// HandlingDeletion records a pass that gives the handlers the object's
// absence (controller.DeletionTracker): only in the Join's table, the
// Elector's has no version to make writes conditional on.
func (t *lingeringTracker) HandlingDeletion(obj controller.ObjectRef) func() {
	t.l.add(obj, t.m)
	return func() { t.l.remove(obj, t.m) }
}
