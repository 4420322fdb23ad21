package kvscheduler_test

import (
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// TestRemovedDependencyIsNotKept: a value remembers the node of its first
// dependency; once that node leaves the graph (its value deleted), the
// dependent, still waiting for it, must not keep it alive (with its
// value, metadata and status, and the node it remembers in turn).
func TestRemovedDependencyIsNotKept(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, withDeps(sb.Descriptor("a", "a/")))
	mustSet(t, s, "a/2", "v")
	mustSet(t, s, "a/1", "v|a/2")
	mustSet(t, s, "a/2", nil)
	wantState(t, s, "a/1", kvscheduler.Pending)
	if got := kvscheduler.NodesKeepingRemoved(s); len(got) > 0 {
		t.Errorf("nodes %v still refer to a removed node", got)
	}
	// A value that no longer depends on it does not keep it either.
	mustSet(t, s, "a/3", "v")
	mustSet(t, s, "a/4", "v|a/3")
	mustSet(t, s, "a/4", "w")
	mustSet(t, s, "a/3", nil)
	if got := kvscheduler.NodesKeepingRemoved(s); len(got) > 0 {
		t.Errorf("nodes %v still refer to a removed node", got)
	}
}
