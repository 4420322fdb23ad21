package kvscheduler_test

import (
	"context"
	"errors"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// TestAdv18DerivedValueOfABaseBackInPendingFollowsItsRequest (adv5 fuzz
// seed 2111819 of -fzretry -fzdd -fzprops -fzview -fzinv -fzrb -fzorder
// -fzdheld -fzrec -fzcancel, reduced; the fuzz's settle check: "settled:
// d/2 held (PENDING) with unmet a/3"): a/3 = v|b/1 and b/1 = v@1|a/3
// (deriving d/1 = dv-v@1|a/3, which Requires a/3) are a cycle, created
// together; a/3's create fails, so b/1 goes back into PENDING. Its
// derived d/1 stays in the graph, PENDING, Requiring a/3 (when b/1 goes
// into PENDING by the cascade of a/3's delete instead, d/1 is dropped,
// NONEXISTENT). b/1 is then requested as w@1|~b/2, which derives d/1 =
// dv-w@1|~b/2 (ordered after b/2, nothing Required), and a full resync
// requests it again: d/1 must not be reported with the dependencies of a
// value nothing derives any more. It is: PENDING, Requiring a/3, the old
// value's, after both. In the fuzz, a value the southbound held under
// d/2 was then reported PENDING with that stale unmet dependency.
func TestAdv18DerivedValueOfABaseBackInPendingFollowsItsRequest(t *testing.T) {
	withFzFlags(t, fzDerivedDeps)
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, fzDescs(sb, &fzCancel{})...)
	_ = set(t, s, "a/3", "v|b/1")
	sb.FailNext("create", "a/3", errors.New("injected"))
	if err := set(t, s, "b/1", "v@1|a/3"); err == nil {
		t.Fatal("a/3's create failed, Commit returned nil")
	}
	wantState(t, s, "b/1", kvscheduler.Pending)
	advOpen(t, "a derived value left PENDING under a base that a failed cycle took back into PENDING keeps its old value's dependencies after the base's request changes, through a full resync")
	err := set(t, s, "b/1", "w@1|~b/2")
	_, err2 := s.StartNBTransaction().WithResync(kvscheduler.FullResync).
		SetValue("a/3", "v|b/1").SetValue("b/1", "w@1|~b/2").Commit(context.Background())
	wantState(t, s, "b/1", kvscheduler.Pending) // ordered after b/2, which nothing provides
	st := s.GetValueStatus("d/1")
	for _, dep := range st.Dependencies {
		if dep.Key == "a/3" {
			t.Errorf("b/1 is requested as w@1|~b/2 (deriving d/1 = dv-w@1|~b/2, which Requires nothing), yet d/1 is reported %s Requiring a/3, as the old value v@1|a/3 derived it (dependencies %+v; commits %v, %v)",
				st.State, st.Dependencies, err, err2)
		}
	}
	advWantAgree(t, s, sb, "after the resync", "a/", "b/", "d/")
}
