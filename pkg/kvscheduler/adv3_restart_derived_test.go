package kvscheduler_test

import (
	"context"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// docs/kvscheduler.md, "Two kinds of dependency": the deletes of values
// nothing wants (read back after a restart) are ordered by their own
// dependencies, "since the cascade does not take them down (before, a
// resync after a restart ... refused the delete of a value a retrieved
// Requires dependent still needed)". orderDeletes looks only at the
// transaction's own deletes: a dependency on a derived value (not one of
// them) does not order them. The restart's resync deletes everything in
// the end, yet Commit fails naming two deletes refused ("still exists")
// that did go through: the error misleads, and a committer that trusts it
// resyncs again or alerts for nothing.

func TestAdv3RestartResyncDeletesDependentOfDerivedValueFirst(t *testing.T) {
	ctx := context.Background()
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	b, d := advBaseDerived(sb)
	register(t, s, b, d, withKindDeps(sb.Descriptor("x", "x/")))
	// Left by the previous run: b/1 with its derived d/1, and x/1, which
	// Requires d/1.
	sb.Set("b/1", "v", false)
	sb.Set("d/1", "v", false)
	sb.Set("x/1", "v|d/1", false)
	_, err := s.StartNBTransaction().WithResync(kvscheduler.FullResync).Commit(ctx)
	advWantAgree(t, s, sb, "after the resync", "b/", "d/", "x/")
	if len(sb.Values()) == 0 && err != nil {
		t.Fatalf("the resync deleted everything it was asked to (ops %v, statuses b/1 %s, d/1 %s), yet Commit fails: %v",
			sb.OpStrings(), advState(s, "b/1"), advState(s, "d/1"), err)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// The same with a cycle: two values left by the previous run that Require
// each other ("cycles are created together", and orderDeletes keeps key
// order for them). The resync deletes both, yet fails naming the delete of
// a/2 as refused because a/1 "still exists": it does not.
func TestAdv3RestartResyncDeletesARetrievedCycle(t *testing.T) {
	ctx := context.Background()
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, withKindDeps(sb.Descriptor("a", "a/")))
	sb.Set("a/1", "v|a/2", false)
	sb.Set("a/2", "v|a/1", false)
	_, err := s.StartNBTransaction().WithResync(kvscheduler.FullResync).Commit(ctx)
	advWantAgree(t, s, sb, "after the resync", "a/")
	if len(sb.Values()) == 0 && err != nil {
		t.Fatalf("the resync deleted both values of the cycle (ops %v, a/1 %s, a/2 %s), yet Commit fails: %v",
			sb.OpStrings(), advState(s, "a/1"), advState(s, "a/2"), err)
	}
	if err != nil {
		t.Fatal(err)
	}
}
